#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    faultline_fuzz::history(faultline::oracle::porcupine_log::parse_porcupine, data)
});
