//! Wireshark-readable capture of the frames on the links (nanosecond timestamps from
//! simulated time, so the bytes are deterministic).

use crate::eth::WireFrame;
use crate::world::NS_PER_CYCLE;
use pcap_file::pcap::{PcapHeader, PcapPacket, PcapWriter};
use pcap_file::{DataLink, Endianness, TsResolution};
use std::time::Duration;

/// The header of every capture the simulator writes: Ethernet, nanosecond timestamps,
/// little-endian, snap length 65535.
pub fn header() -> PcapHeader {
    PcapHeader {
        version_major: 2,
        version_minor: 4,
        ts_correction: 0,
        ts_accuracy: 0,
        snaplen: 65535,
        datalink: DataLink::ETHERNET,
        ts_resolution: TsResolution::NanoSecond,
        endianness: Endianness::Little,
    }
}

/// Append one frame to a capture started with [`header`] (the external port streams its
/// captures to a file this way).
pub fn write_frame(
    w: &mut impl std::io::Write,
    ts: Duration,
    data: &[u8],
) -> Result<(), pcap_file::PcapError> {
    let h = header();
    PcapPacket::new(ts, data.len() as u32, data).write_to::<_, byteorder::LittleEndian>(
        w,
        h.ts_resolution,
        h.snaplen,
    )?;
    Ok(())
}

/// Encode frames as a pcap file (Ethernet link type, nanosecond resolution).
pub fn to_pcap<'a>(
    frames: impl IntoIterator<Item = &'a WireFrame>,
) -> Result<Vec<u8>, pcap_file::PcapError> {
    let mut w = PcapWriter::with_header(Vec::new(), header())?;
    for f in frames {
        let ns = (f.sent_at as f64 * NS_PER_CYCLE) as u64;
        w.write_packet(&PcapPacket::new(
            Duration::from_nanos(ns),
            f.data.len() as u32,
            &f.data,
        ))?;
    }
    Ok(w.into_writer())
}
