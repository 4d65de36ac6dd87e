//! Hand-built histories for the checker tests.

#![allow(dead_code)]

use faultline::oracle::history::{DEFAULT_FIELDS, History, Op};
use serde_json::Value;

/// One op on node n1 by process `p`; `ret: None` makes it indeterminate (timed out).
#[allow(clippy::too_many_arguments)]
pub fn op(
    id: u64,
    p: impl ToString,
    call: u64,
    ret: Option<u64>,
    kind: &str,
    key: &str,
    input: Value,
    output: Value,
) -> Op {
    Op {
        op_id: id.to_string().into(),
        process: p.to_string().into(),
        invoke_ts: call,
        complete_ts: ret,
        op_type: kind.into(),
        key: Some(key.into()),
        input,
        output,
        error: None,
        timeout: ret.is_none(),
        node: Some("n1".into()),
        fault_epoch: None,
    }
}

/// `ops` as a history carrying every default field.
pub fn history(ops: Vec<Op>) -> History {
    History {
        ops,
        present_fields: DEFAULT_FIELDS.iter().map(|f| f.to_string()).collect(),
        unknown_fields: Default::default(),
        source: "test".into(),
    }
}
