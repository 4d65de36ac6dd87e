#![no_main]

use faultline::oracle::format::Format;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    faultline_fuzz::history(faultline::oracle::jepsen_log::parse_jepsen_log, data);
    faultline_fuzz::streamed_agrees(Format::JepsenLog, data);
});
