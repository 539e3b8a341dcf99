//! Verilog emission helpers: choose the top module's name, replace rust-hdl's `$` hierarchy
//! separator by `_` (Verilator mangles `$` in C++ names, and it is awkward in XDC/Tcl), and check
//! that the renaming creates no collision.

use rust_hdl::prelude::*;
use std::collections::HashMap;

/// Errors from Verilog generation.
#[derive(Debug)]
pub enum GenError {
    /// rust-hdl's design-rule check failed.
    Check(String),
    /// Two identifiers of one module would become the same after `$` -> `_`.
    Collision {
        module: String,
        a: String,
        b: String,
    },
}

impl std::fmt::Display for GenError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            GenError::Check(e) => write!(f, "rust-hdl design-rule check failed: {e}"),
            GenError::Collision { module, a, b } => write!(
                f,
                "in module {module}: `{a}` and `{b}` collide after replacing `$` by `_`; rename a field"
            ),
        }
    }
}
impl std::error::Error for GenError {}

/// Generate the Verilog of `uut` with top module `top`, `$` replaced by `_`.
pub fn verilog<U: Block>(uut: &mut U, top: &str) -> Result<String, GenError> {
    uut.connect_all();
    verilog_connected(uut, top)
}

/// [`verilog`] for a block whose `connect_all()` was already called.
pub fn verilog_connected<U: Block>(uut: &U, top: &str) -> Result<String, GenError> {
    check_all(uut).map_err(|e| GenError::Check(format!("{e:?}")))?;
    let mut defs = ModuleDefines::default();
    uut.accept(top, &mut defs);
    sanitize(&defs.defines())
}

/// Replace `$` inside identifiers by `_`, keeping system tasks (`$signed`, `$display`, ...).
pub fn sanitize(v: &str) -> Result<String, GenError> {
    let ident = regex::Regex::new(r"\$?[A-Za-z_][A-Za-z0-9_$]*").expect("static regex");
    let module_re = regex::Regex::new(r"module\s+([A-Za-z0-9_$]+)").expect("static regex");
    let mut out = String::with_capacity(v.len());
    for chunk in v.split_inclusive("endmodule") {
        let module = module_re
            .captures(chunk)
            .map(|c| c[1].to_string())
            .unwrap_or_default();
        let mut seen: HashMap<String, String> = HashMap::new();
        let mut err = None;
        let renamed = ident.replace_all(chunk, |c: &regex::Captures| {
            let id = &c[0];
            if id.starts_with('$') {
                return id.to_string();
            }
            let new = id.replace('$', "_");
            // `.port(` names a child's port: a different scope, and identical text anyway
            let prev = seen.entry(new.clone()).or_insert_with(|| id.to_string());
            if prev != id && err.is_none() {
                err = Some(GenError::Collision {
                    module: module.clone(),
                    a: prev.clone(),
                    b: id.to_string(),
                });
            }
            new
        });
        if let Some(e) = err {
            return Err(e);
        }
        out.push_str(&renamed);
    }
    Ok(out)
}

/// A port of a generated module.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Port {
    pub name: String,
    pub input: bool,
    pub width: usize,
}

/// The ports of module `top` in generated Verilog, in declaration order.
pub fn ports(v: &str, top: &str) -> Vec<Port> {
    let start = v
        .find(&format!("module {top}("))
        .or_else(|| v.find(&format!("module {top} (")))
        .unwrap_or(0);
    let body = &v[start..];
    let body = &body[..body.find("endmodule").unwrap_or(body.len())];
    // rust-hdl declares a module's ports under "// Module arguments", before its "// Update
    // code": declarations in the update code (a task's `input x;`) are not ports
    let body = &body[..body.find("// Update code").unwrap_or(body.len())];
    let re = regex::Regex::new(
        r"(?m)^\s*(input|output)\s+(?:wire|reg)?\s*(?:\[(\d+):0\])?\s*([A-Za-z_][A-Za-z0-9_]*)\s*;",
    )
    .expect("static regex");
    re.captures_iter(body)
        .map(|c| Port {
            name: c[3].to_string(),
            input: &c[1] == "input",
            width: c
                .get(2)
                .map_or(1, |m| m.as_str().parse::<usize>().unwrap_or(0) + 1),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Only the declarations under "// Module arguments" are ports: a task's `input x;` lines
    /// in the update code are not.
    #[test]
    fn ports_are_the_module_arguments_only() {
        let v = "module m(a,b,y);
    
    // Module arguments
    input wire  [7:0] a;
    input wire  b;
    output reg  [511:0] y;
    
    // Update code (custom)
task t;
    input [7:0] t_a;
    output [511:0] t_y;
    begin
        t_y = {504'd0, t_a};
    end
endtask
always @(*) t(a, y);
endmodule
";
        let p = ports(v, "m");
        let names: Vec<_> = p
            .iter()
            .map(|p| (p.name.as_str(), p.input, p.width))
            .collect();
        assert_eq!(names, [("a", true, 8), ("b", true, 1), ("y", false, 512)]);
    }
}
