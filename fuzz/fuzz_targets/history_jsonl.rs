#![no_main]

use std::collections::BTreeMap;

use faultline::oracle::history::read_jsonl_history;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    faultline_fuzz::history(faultline::oracle::parse_jsonl, data);
    // The fast readers (the hand scanner, the typed visitor) read what the per-line
    // reader alone reads, or fail as it fails: a rename of a field no line has
    // turns them off. Raw bytes, so text that is not UTF-8 is compared too.
    let off = BTreeMap::from([("\u{0}none".to_string(), "\u{0}none".to_string())]);
    let fast = read_jsonl_history("h", data, &BTreeMap::new());
    let slow = read_jsonl_history("h", data, &off);
    assert_eq!(fast, slow);
});
