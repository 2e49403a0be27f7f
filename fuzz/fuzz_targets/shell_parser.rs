//! The shell's command syntax: lexer and parser on arbitrary text (a line
//! typed, a script file), then the argument conversions commands apply
//! (bytes, text, integers, booleans, dict keys).
#![no_main]

use ferrobase_shell::lexer::lex;
use ferrobase_shell::parser::parse;
use ferrobase_shell::value::{Dict, Value};
use libfuzzer_sys::fuzz_target;

fn convert(v: &Value, depth: usize) {
    let _ = (
        v.describe(),
        v.key(),
        v.bytes("X"),
        v.text("X"),
        v.int("X"),
        v.uint("X"),
        v.boolean("X"),
    );
    if depth == 0 {
        return;
    }
    match v {
        Value::Array(items) => items.iter().for_each(|i| convert(i, depth - 1)),
        Value::Dict(pairs) => {
            let d = Dict::new(pairs);
            let _ = (
                d.get("NAME"),
                d.entries(),
                d.check_keys("x", &["NAME", "VERSIONS"]),
            );
            for (k, v) in pairs {
                convert(k, depth - 1);
                convert(v, depth - 1);
            }
        }
        _ => {}
    }
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let _ = lex(text);
    match parse(text) {
        Ok(commands) => {
            for c in commands {
                for a in &c.args {
                    convert(a, 8);
                }
            }
        }
        Err(e) => {
            let _ = (e.pos(), e.to_string());
        }
    }
});
