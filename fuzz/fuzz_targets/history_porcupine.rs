#![no_main]

use faultline::oracle::format::Format;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    faultline_fuzz::history(faultline::oracle::porcupine_log::parse_porcupine, data);
    faultline_fuzz::streamed_agrees(Format::Porcupine, data);
});
