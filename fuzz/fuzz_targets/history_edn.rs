#![no_main]

use faultline::oracle::Op;
use faultline::oracle::format::{Format, fold_history, read_history_file};
use faultline::oracle::op_view::{OpSink, OpView};

/// The ops a fold is handed.
struct Ops(Vec<Op>);

impl OpSink for Ops {
    fn op(&mut self, op: &OpView<'_>) {
        self.0.push(op.to_op());
    }
}

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    faultline_fuzz::history(faultline::oracle::jepsen::parse_edn, data);
    // The raw bytes (not made UTF-8 first) streamed into a History, and folded as
    // a checker folds them: the same ops, header and error.
    let name = faultline_fuzz::HISTORY_FILE;
    let whole = read_history_file(Format::Edn, name, data);
    let mut ops = Ops(Vec::new());
    let folded = fold_history(Format::Edn, name, data, Some(|| Ok(data)), &mut ops);
    match (whole, folded) {
        (Ok(history), Ok(header)) => {
            assert_eq!(history.header(), header);
            assert_eq!(history.ops, ops.0);
        }
        (Err(a), Err(b)) => {
            assert_eq!(a.to_string(), b.to_string());
            assert!(a.to_string().starts_with(name), "{a}");
        }
        (a, b) => panic!("read whole: {a:?}; folded: {b:?}"),
    }
});
