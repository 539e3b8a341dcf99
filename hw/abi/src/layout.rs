//! A tiny declarative layout language for fixed-size little-endian records (WQE, CQE, QP
//! context, MR entry). Each layout yields a plain struct, `encode`/`decode`, a field table
//! (used by the RTL for bit slices and by the register-doc generator) and compile-time checks
//! that fields fit and do not overlap.

/// One field of a record: byte offset and width in bits (multiples of 8).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FieldDesc {
    pub name: &'static str,
    pub offset: usize,
    pub bits: usize,
    pub doc: &'static str,
}

impl FieldDesc {
    /// Bit offset of the field inside the record when the record is a little-endian bit vector
    /// (byte 0 = bits 7:0), which is how the RTL sees a 512-bit beat.
    pub const fn bit_offset(&self) -> usize {
        self.offset * 8
    }

    /// Byte-enable mask of the field in a record of at most 64 bytes (bit i = byte i), as the
    /// context store's byte-enable writes take it.
    pub const fn byte_mask(&self) -> u64 {
        let n = self.bits / 8;
        assert!(
            self.offset + n <= 64,
            "byte masks cover records of at most 64 bytes"
        );
        let ones = if n >= 64 { u64::MAX } else { (1u64 << n) - 1 };
        ones << self.offset
    }
}

const fn str_eq(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

/// Byte-enable mask covering the named fields of a field table. A `const fn`: used in a
/// constant, an unknown name is a compile error.
pub const fn fields_mask(fields: &[FieldDesc], names: &[&str]) -> u64 {
    let mut m = 0;
    let mut i = 0;
    while i < names.len() {
        let mut j = 0;
        let mut found = false;
        while j < fields.len() {
            if str_eq(fields[j].name, names[i]) {
                m |= fields[j].byte_mask();
                found = true;
            }
            j += 1;
        }
        assert!(found, "fields_mask: no field of that name in the layout");
        i += 1;
    }
    m
}

/// Compile-time check: every field ends inside `size` and no two fields overlap.
pub const fn check_fields(fields: &[FieldDesc], size: usize) -> bool {
    let mut i = 0;
    while i < fields.len() {
        let a = &fields[i];
        if a.bits == 0 || !a.bits.is_multiple_of(8) || a.offset + a.bits / 8 > size {
            return false;
        }
        let mut j = i + 1;
        while j < fields.len() {
            let b = &fields[j];
            let a_end = a.offset + a.bits / 8;
            let b_end = b.offset + b.bits / 8;
            if a.offset < b_end && b.offset < a_end {
                return false;
            }
            j += 1;
        }
        i += 1;
    }
    true
}

/// Integer types a layout field may have.
pub trait LeField: Sized + Copy + Default {
    const BYTES: usize;
    fn put(self, out: &mut [u8]);
    fn get(inp: &[u8]) -> Self;
}

macro_rules! le_int {
    ($($t:ty),*) => {$(
        impl LeField for $t {
            const BYTES: usize = core::mem::size_of::<$t>();
            fn put(self, out: &mut [u8]) { out[..Self::BYTES].copy_from_slice(&self.to_le_bytes()); }
            fn get(inp: &[u8]) -> Self {
                let mut b = [0u8; core::mem::size_of::<$t>()];
                b.copy_from_slice(&inp[..Self::BYTES]);
                <$t>::from_le_bytes(b)
            }
        }
    )*};
}
le_int!(u8, u16, u32, u64);

impl<const N: usize> LeField for [u8; N]
where
    [u8; N]: Default,
{
    const BYTES: usize = N;
    fn put(self, out: &mut [u8]) {
        out[..N].copy_from_slice(&self);
    }
    fn get(inp: &[u8]) -> Self {
        let mut b = [0u8; N];
        b.copy_from_slice(&inp[..N]);
        b
    }
}

/// Declare a fixed-size record. Fields are `name: type = byte_offset, "doc";`.
#[macro_export]
macro_rules! layout {
    (
        $(#[$m:meta])*
        pub struct $name:ident [$size:expr] {
            $( $(#[$fm:meta])* $f:ident : $t:ty = $off:expr, $doc:expr; )*
        }
    ) => {
        $(#[$m])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
        pub struct $name {
            $( $(#[$fm])* #[doc = $doc] pub $f: $t, )*
        }

        impl $name {
            /// Size of the encoded record in bytes.
            pub const SIZE: usize = $size;
            /// Field table: name, byte offset, width.
            pub const FIELDS: &'static [$crate::layout::FieldDesc] = &[
                $( $crate::layout::FieldDesc {
                    name: stringify!($f),
                    offset: $off,
                    bits: 8 * <$t as $crate::layout::LeField>::BYTES,
                    doc: $doc,
                }, )*
            ];

            /// Encode into the little-endian byte image the hardware reads.
            pub fn encode(&self) -> [u8; $size] {
                let mut out = [0u8; $size];
                $( $crate::layout::LeField::put(self.$f, &mut out[$off..]); )*
                out
            }

            /// Decode from the byte image the hardware writes.
            pub fn decode(b: &[u8; $size]) -> Self {
                Self { $( $f: <$t as $crate::layout::LeField>::get(&b[$off..]), )* }
            }

            /// Byte-enable mask (bit i = byte i) of the named fields, for masked context writes.
            /// Evaluate it in a constant: an unknown name is then a compile error.
            pub const fn byte_mask(names: &[&str]) -> u64 {
                $crate::layout::fields_mask(Self::FIELDS, names)
            }

            /// Look up a field by name (used by the RTL generator and the doc generator).
            pub fn field(name: &str) -> Option<$crate::layout::FieldDesc> {
                Self::FIELDS.iter().copied().find(|f| f.name == name)
            }
        }

        const _: () = assert!($crate::layout::check_fields($name::FIELDS, $size),
            concat!("layout ", stringify!($name), ": a field overflows or overlaps"));
    };
}
