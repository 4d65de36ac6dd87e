#![no_main]

use faultline::oracle::format::Format;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    faultline_fuzz::history(faultline::oracle::jepsen::parse_edn, data);
    faultline_fuzz::streamed_agrees(Format::Edn, data);
});
