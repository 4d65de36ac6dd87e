//! Key-value histories shaped like Porcupine's kv test data (`c01`/`c10`/`c50`:
//! 1, 10 or 50 clients doing get / put / append on ten keys, one EDN map per
//! line, no `:time`, so file order is the clock), made by simulating clients
//! against an atomic store. Each op takes effect at a point strictly inside its
//! interval (soon after its call), so the history is linearizable by
//! construction; the stale variant changes one get (in the second half) to return a value that no order allowed
//! by real time can produce (see [`plant_stale`]).
//!
//! Shared by the test suite and `benches/linearizability.rs` (through `#[path]`).

use std::collections::HashMap;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Get,
    Put,
    Append,
}

/// One op: `value` is the put / appended text, or the text a get returned.
#[derive(Debug, Clone)]
pub struct KvOp {
    pub client: u32,
    pub key: u32,
    pub kind: Kind,
    pub value: String,
    pub call: u64,
    pub ret: u64,
}

/// Clients, keys and ops of one history.
#[derive(Debug, Clone, Copy)]
pub struct Shape {
    pub clients: u32,
    pub keys: u32,
    pub ops: usize,
}

/// The sizes of Porcupine's files, estimated from their lengths (ten keys each).
pub const PORCUPINE_SHAPES: [(&str, Shape); 3] = [
    (
        "c01",
        Shape {
            clients: 1,
            keys: 10,
            ops: 40,
        },
    ),
    (
        "c10",
        Shape {
            clients: 10,
            keys: 10,
            ops: 330,
        },
    ),
    (
        "c50",
        Shape {
            clients: 50,
            keys: 10,
            ops: 1_800,
        },
    ),
];

/// xorshift64*: reproducible histories without a dependency.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) % n.max(1)
    }
}

/// A history of `shape`; `stale` plants one stale get (returns false in the
/// second value when no get could be made stale, e.g. a history too short).
pub fn generate(shape: Shape, stale: bool, seed: u64) -> (Vec<KvOp>, bool) {
    let mut rng = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
    let clients = shape.clients.max(1);
    let mut free_at: Vec<u64> = (0..clients).map(|_| rng.below(20)).collect();
    let mut counter = vec![0u32; clients as usize];
    let mut ops = Vec::with_capacity(shape.ops);
    let mut points = Vec::with_capacity(shape.ops);
    for _ in 0..shape.ops {
        // The client free earliest issues the next op.
        let c = (0..clients as usize)
            .min_by_key(|&c| (free_at[c], c))
            .unwrap_or(0);
        let call = free_at[c] + rng.below(10);
        let ret = call + 2 + rng.below(30);
        let kind = match rng.below(10) {
            0..=3 => Kind::Get,
            4 => Kind::Put,
            _ => Kind::Append,
        };
        let value = if kind == Kind::Get {
            String::new()
        } else {
            counter[c] += 1;
            format!("x {c} {} y", counter[c] - 1)
        };
        // The point it takes effect: strictly inside its interval, within a few
        // ticks of its call. Porcupine's kv histories come from a Raft-replicated
        // store, whose log orders ops by their arrival at the leader however long
        // each then waits for its answer.
        points.push((call + 1 + rng.below((ret - call - 1).min(3)), ops.len()));
        ops.push(KvOp {
            client: c as u32,
            key: rng.below(u64::from(shape.keys.max(1))) as u32,
            kind,
            value,
            call,
            ret,
        });
        free_at[c] = ret + 1;
    }
    // Run the store in effect order: gets read, puts and appends record the
    // value they found (for the stale variant).
    points.sort_unstable();
    let mut store: HashMap<u32, String> = HashMap::new();
    let mut before: Vec<String> = vec![String::new(); ops.len()];
    for &(_, i) in &points {
        let op = &mut ops[i];
        let current = store.entry(op.key).or_default();
        match op.kind {
            Kind::Get => op.value = current.clone(),
            Kind::Put => {
                before[i] = std::mem::replace(current, op.value.clone());
            }
            Kind::Append => {
                before[i] = current.clone();
                current.push_str(&op.value);
            }
        }
    }
    let planted = stale && plant_stale(&mut ops, &before);
    (ops, planted)
}

/// Make one get in the second half return the value its key held just before
/// a put / append `w` that returned before the get was called. After `w` the
/// key's value carries `w`'s token until some put replaces it, so the old value
/// `v` can only come back if the op that began `v` is re-applied after `w`:
/// impossible when `v` is empty or began with an append (the key is never empty
/// again once written), or began with a put that returned before `w` was called.
/// Tokens are unique, so no other op can rebuild `v`.
fn plant_stale(ops: &mut [KvOp], before: &[String]) -> bool {
    let starts: HashMap<&str, usize> = ops
        .iter()
        .enumerate()
        .filter(|(_, o)| o.kind != Kind::Get)
        .map(|(i, o)| (o.value.as_str(), i))
        .collect();
    let beginner = |v: &str| -> Option<usize> {
        let end = v.find(" y")? + 2;
        starts.get(&v[..end]).copied()
    };
    let cannot_return = |v: &str, w: &KvOp| {
        v.is_empty()
            || beginner(v).is_some_and(|b| ops[b].kind == Kind::Append || ops[b].ret < w.call)
    };
    let mut choice = None;
    'gets: for g in ops.len() / 2..ops.len() {
        if ops[g].kind != Kind::Get {
            continue;
        }
        for (w, op) in ops.iter().enumerate() {
            if op.kind != Kind::Get
                && op.key == ops[g].key
                && op.ret < ops[g].call
                && before[w] != ops[g].value
                && cannot_return(&before[w], op)
            {
                choice = Some((g, before[w].clone()));
                break 'gets;
            }
        }
    }
    match choice {
        Some((g, v)) => {
            ops[g].value = v;
            true
        }
        None => false,
    }
}

/// Porcupine's EDN lines: an invoke at each call, an `:ok` at each return.
pub fn to_edn(ops: &[KvOp]) -> String {
    // (time, returns after calls at the same instant, op)
    let mut events: Vec<(u64, bool, usize)> = Vec::with_capacity(ops.len() * 2);
    for (i, op) in ops.iter().enumerate() {
        events.push((op.call, false, i));
        events.push((op.ret, true, i));
    }
    events.sort_unstable();
    let mut out = String::new();
    for (_, done, i) in events {
        let op = &ops[i];
        let f = match op.kind {
            Kind::Get => "get",
            Kind::Put => "put",
            Kind::Append => "append",
        };
        let value = if op.kind == Kind::Get && !done {
            "nil".to_string()
        } else {
            format!("{:?}", op.value)
        };
        let kind = if done { "ok" } else { "invoke" };
        out.push_str(&format!(
            "{{:process {}, :type :{kind}, :f :{f}, :key \"{}\", :value {value}}}\n",
            op.client, op.key
        ));
    }
    out
}
