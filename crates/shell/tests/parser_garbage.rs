//! Garbage in, no panic out: the parser answers every input with commands
//! or an error, and a syntax error's position lies inside the input.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use ferrobase_shell::parser::{ParseError, parse};
use proptest::prelude::*;

const PIECES: &[&str] = &[
    "create",
    "put",
    "scan",
    "get",
    "'t'",
    "\"r\\x00\"",
    "'f:q'",
    "{",
    "}",
    "[",
    "]",
    "(",
    ")",
    "=>",
    ",",
    ";",
    "\n",
    "NAME",
    "VERSIONS",
    "1",
    "-5",
    "0x1F",
    "1.5",
    "'",
    "\"",
    "\\",
    "#",
    "true",
    "@",
    "\"\\x\"",
    "\"\\u12\"",
    "\\\n",
    "é",
    "\u{0}",
    " ",
];

fn check(text: &str) {
    match parse(text) {
        Ok(_) | Err(ParseError::Incomplete(_)) => {}
        Err(ParseError::Syntax { pos, message }) => {
            assert!(!message.is_empty());
            let lines = text.split('\n').count();
            assert!(
                pos.line >= 1 && pos.line <= lines,
                "{pos:?} outside {text:?}"
            );
        }
        Err(other) => panic!("unexpected parse error kind for {text:?}: {other:?}"),
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_text_never_panics(text in "\\PC{0,80}") {
        check(&text);
    }

    #[test]
    fn shell_like_token_soup_never_panics(
        picks in proptest::collection::vec(0..PIECES.len(), 0..40)
    ) {
        let text: String = picks.iter().map(|&i| PIECES[i]).collect::<Vec<_>>().join(" ");
        check(&text);
        let glued: String = picks.iter().map(|&i| PIECES[i]).collect();
        check(&glued);
    }

    #[test]
    fn truncated_valid_commands_are_incomplete_or_errors(cut in 0usize..200) {
        let line = "create 'NewsClickFeedback',{NAME=>'Toutiao',VERSIONS=>1,TTL => '259200'},{SPLITS => ['1','2']}";
        let cut = cut.min(line.len());
        check(&line[..cut]);
    }
}

#[test]
fn arbitrary_bytes_as_lossy_text_never_panic() {
    // A fixed seed: deterministic "random" bytes, including invalid UTF-8.
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    for _ in 0..2000 {
        let mut bytes = Vec::new();
        for _ in 0..(x % 64) {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            bytes.push((x & 0xFF) as u8);
        }
        check(&String::from_utf8_lossy(&bytes));
        x = x.wrapping_add(1);
    }
}
