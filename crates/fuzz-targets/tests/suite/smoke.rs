//! The short run of every fuzz target inside `cargo xtask test`: its seeds, then [`INPUTS`]
//! inputs mutated from them by a seeded generator (the same inputs every run), through the very
//! function the libFuzzer binary calls. A panic is a finding: the input is written under
//! `CARGO_TARGET_TMPDIR/fuzz-smoke/<target>/` and the test fails naming it.
//!
//! What this is not: coverage-guided. libFuzzer keeps an input that reaches new code and
//! mutates it further; this only mutates seeds, bytes and, where a line is JSON, its values.
//! It proves each target builds and runs in the normal tests and catches what a few mutations
//! of a seed reach; the long, guided runs are `cargo xtask fuzz`.

use std::path::{Path, PathBuf};
use std::time::Instant;

use serde_json::Value;

/// Mutated inputs per target (a few seconds in a debug build on 2 shared cores).
const INPUTS: usize = 2_000;

/// The largest input made (libFuzzer's own default is 4 KiB; seeds are larger).
const MAX_LEN: usize = 64 * 1024;

/// Seeds besides `fuzz/seeds/<target>`: the crates' fixtures `cargo xtask fuzz` also seeds
/// from (`xtask/src/fuzz.rs`, `TARGETS`; the shared reference folder is left out: the tests do
/// not depend on what sits beside the clone).
fn extra_seeds(target: &str) -> &'static [(&'static str, &'static str)] {
    match target {
        "claude_stream" => &[("crates/claude-code/tests/fixtures", ".stream.jsonl")],
        "codex_events" => &[("crates/codex/tests/fixtures", ".jsonl")],
        "preset" => &[("presets", ".yaml")],
        _ => &[],
    }
}

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn files(dir: &Path, suffix: &str) -> Vec<Vec<u8>> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut paths: Vec<PathBuf> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_file() && p.to_string_lossy().ends_with(suffix))
        .collect();
    paths.sort();
    paths
        .iter()
        .filter_map(|p| std::fs::read(p).ok())
        .map(|mut bytes| {
            bytes.truncate(MAX_LEN);
            bytes
        })
        .collect()
}

fn seeds(target: &str) -> Vec<Vec<u8>> {
    let root = root();
    let mut seeds = files(&root.join("fuzz/seeds").join(target), "");
    for (dir, suffix) in extra_seeds(target) {
        seeds.extend(files(&root.join(dir), suffix));
    }
    seeds
}

/// xorshift64*: small, seeded, the same sequence everywhere.
struct Rng(u64);

impl Rng {
    fn new(name: &str) -> Self {
        let seed = name.bytes().fold(0x9E37_79B9_7F4A_7C15_u64, |h, b| {
            (h ^ u64::from(b)).wrapping_mul(0x100_0000_01B3)
        });
        Self(seed | 1)
    }

    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next() % n as u64) as usize
        }
    }

    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

/// Bytes worth inserting into any of our formats: JSON edges, SSE and YAML syntax, broken UTF-8.
const TOKENS: &[&str] = &[
    "null",
    "true",
    "-1",
    "0",
    "1e999",
    "-0.0",
    "18446744073709551616",
    "-9223372036854775809",
    "\"\"",
    "{}",
    "[]",
    "\"\\u0000\"",
    "\"\\ud800\"",
    "\\",
    "\"",
    ",",
    ":",
    "\n",
    "\r\n",
    "\n\n",
    "data: ",
    "data:",
    "event: ",
    ": keep-alive\n",
    "[DONE]",
    "---\n",
    "${",
    "${HOME}",
    "${NESTED}",
    "${LONG}",
    "$${X}",
    "&a ",
    "*a",
    "!!binary ",
    "- ",
    "? ",
    "\t",
    "é",
    "\u{200b}",
    "💥",
];

/// JSON values a node may become.
fn value(rng: &mut Rng) -> Value {
    match rng.below(16) {
        0 => Value::Null,
        1 => Value::Bool(rng.below(2) == 0),
        2 => serde_json::json!(-1),
        3 => serde_json::json!(u64::MAX),
        4 => serde_json::json!(i64::MIN),
        5 => serde_json::json!(1.5e300),
        6 => serde_json::json!(""),
        7 => Value::String("x".repeat(rng.below(5_000))),
        8 => serde_json::json!([]),
        9 => serde_json::json!({}),
        10 => {
            let mut deep = Value::Null;
            for _ in 0..rng.below(200) {
                deep = serde_json::json!([deep]);
            }
            deep
        }
        11 => Value::String((*rng.pick(TOKENS)).to_owned()),
        12 => serde_json::json!({"type": "text", "text": "t"}),
        13 => serde_json::json!(0),
        14 => serde_json::json!(4_294_967_296_u64),
        _ => Value::String("\u{0}\u{1b}[31m".to_owned()),
    }
}

/// The nodes of a value, counted depth first.
fn count(value: &Value) -> usize {
    1 + match value {
        Value::Array(items) => items.iter().map(count).sum(),
        Value::Object(map) => map.values().map(count).sum(),
        _ => 0,
    }
}

/// Changes the `at`-th node (depth first): a new value, or, inside an array or an object, a
/// removed or repeated child.
fn mutate_node(node: &mut Value, at: &mut usize, rng: &mut Rng) -> bool {
    if *at == 0 {
        match node {
            Value::Array(items) if !items.is_empty() && rng.below(3) == 0 => {
                let i = rng.below(items.len());
                if rng.below(2) == 0 {
                    items.remove(i);
                } else {
                    let copy = items[i].clone();
                    items.insert(i, copy);
                }
            }
            Value::Object(map) if !map.is_empty() && rng.below(3) == 0 => {
                let i = rng.below(map.len());
                if let Some(key) = map.keys().nth(i).cloned() {
                    map.shift_remove(&key);
                }
            }
            _ => *node = value(rng),
        }
        return true;
    }
    *at -= 1;
    match node {
        Value::Array(items) => items.iter_mut().any(|item| mutate_node(item, at, rng)),
        Value::Object(map) => map.values_mut().any(|item| mutate_node(item, at, rng)),
        _ => false,
    }
}

/// One line that is JSON (or `data: ` JSON, or JSON after a leading mode byte) with one of its
/// nodes changed; `None` when no line is.
fn mutate_json(input: &[u8], rng: &mut Rng) -> Option<Vec<u8>> {
    let lines: Vec<&[u8]> = input.split(|&b| b == b'\n').collect();
    let start = rng.below(lines.len());
    for offset in 0..lines.len() {
        let index = (start + offset) % lines.len();
        let line = lines[index];
        let cut = [
            0,
            usize::from(line.starts_with(b"data: ")) * 6,
            usize::from(!line.is_empty()),
        ];
        for skip in cut {
            let Ok(mut parsed) = serde_json::from_slice::<Value>(&line[skip..]) else {
                continue;
            };
            if !(parsed.is_object() || parsed.is_array()) {
                continue;
            }
            let mut at = rng.below(count(&parsed));
            mutate_node(&mut parsed, &mut at, rng);
            let mut changed = line[..skip].to_vec();
            changed.extend(serde_json::to_vec(&parsed).ok()?);
            let mut out = Vec::with_capacity(input.len() + 64);
            for (i, l) in lines.iter().enumerate() {
                if i > 0 {
                    out.push(b'\n');
                }
                out.extend_from_slice(if i == index { &changed } else { l });
            }
            return Some(out);
        }
    }
    None
}

/// One byte-level change.
fn mutate_bytes(input: &mut Vec<u8>, seeds: &[Vec<u8>], rng: &mut Rng) {
    let len = input.len();
    match rng.below(8) {
        0 if len > 0 => {
            let i = rng.below(len);
            input[i] ^= 1 << rng.below(8);
        }
        1 if len > 0 => {
            let i = rng.below(len);
            input[i] = rng.next() as u8;
        }
        2 if len > 0 => {
            let from = rng.below(len);
            let to = (from + 1 + rng.below(64)).min(len);
            input.drain(from..to);
        }
        3 if len > 0 => {
            let from = rng.below(len);
            let to = (from + 1 + rng.below(256)).min(len);
            let piece = input[from..to].to_vec();
            for _ in 0..=rng.below(8) {
                input.splice(to..to, piece.iter().copied());
            }
        }
        4 => input.truncate(rng.below(len + 1)),
        5 => {
            let other = rng.pick(seeds);
            let keep = rng.below(len + 1);
            let from = rng.below(other.len() + 1);
            input.truncate(keep);
            input.extend_from_slice(&other[from..]);
        }
        _ => {
            let at = rng.below(len + 1);
            let token = rng.pick(TOKENS).as_bytes();
            input.splice(at..at, token.iter().copied());
        }
    }
}

fn mutant(seeds: &[Vec<u8>], rng: &mut Rng) -> Vec<u8> {
    let mut input = rng.pick(seeds).clone();
    for _ in 0..=rng.below(4) {
        let structural = rng.below(2) == 0;
        match structural.then(|| mutate_json(&input, rng)).flatten() {
            Some(changed) => input = changed,
            None => mutate_bytes(&mut input, seeds, rng),
        }
    }
    input.truncate(MAX_LEN);
    input
}

/// Writes a failing input where the message says and fails.
fn found(target: &str, input: &[u8], n: usize, message: String) -> ! {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("fuzz-smoke")
        .join(target);
    let _ = std::fs::create_dir_all(&dir);
    let file = dir.join(format!("input-{n}"));
    let _ = std::fs::write(&file, input);
    panic!(
        "fuzz target {target} panicked on input {n} (written to {}): {message}\n\
         replay it through the libFuzzer binary: cargo xtask fuzz's reproducer line in docs/reliability.md",
        file.display()
    );
}

fn smoke(target: &str) {
    let Some(&(_, body)) = subagent_fuzz_targets::TARGETS
        .iter()
        .find(|(name, _)| *name == target)
    else {
        panic!("no target {target}");
    };
    let seeds = seeds(target);
    assert!(!seeds.is_empty(), "fuzz target {target} has no seeds");
    let mut rng = Rng::new(target);
    let started = Instant::now();
    let inputs = seeds
        .iter()
        .cloned()
        .chain((0..INPUTS).map(|_| mutant(&seeds, &mut rng)));
    for (n, input) in inputs.enumerate() {
        if let Err(panic) = std::panic::catch_unwind(|| body(&input)) {
            let message = panic
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| panic.downcast_ref::<&str>().map(|s| (*s).to_owned()))
                .unwrap_or_default();
            found(target, &input, n, message);
        }
    }
    eprintln!(
        "{target}: {} seeds and {INPUTS} mutated inputs in {:.2?}, no panic",
        seeds.len(),
        started.elapsed()
    );
}

macro_rules! smoke_tests {
    ($($name:ident),* $(,)?) => {
        $(
            #[test]
            fn $name() {
                smoke(stringify!($name));
            }
        )*

        /// Every target of the list has its test here.
        #[test]
        fn every_target_has_a_short_run() {
            let tested: Vec<&str> = vec![$(stringify!($name)),*];
            let targets: Vec<&str> = subagent_fuzz_targets::TARGETS.iter().map(|(name, _)| *name).collect();
            pretty_assertions::assert_eq!(tested, targets);
        }
    };
}

smoke_tests!(
    claude_stream,
    codex_events,
    model_sse,
    preset,
    agent_definition,
    a2a_wire,
    a2a_server,
    acp_updates,
    transcript,
    mcp_arguments,
    a2a_client,
    acp_frames,
    mcp_frames,
    skill_file,
);

/// The generator is deterministic, so a failure here is a failure on every machine.
#[test]
fn the_mutated_inputs_are_the_same_every_run() {
    let seeds = vec![
        br#"{"a":[1,2,{"b":"c"}]}"#.to_vec(),
        b"data: {\"x\":1}\n\n".to_vec(),
    ];
    let run = || {
        let mut rng = Rng::new("same");
        (0..50)
            .map(|_| mutant(&seeds, &mut rng))
            .collect::<Vec<_>>()
    };
    assert_eq!(run(), run());
    assert!(
        run()
            .iter()
            .any(|input| serde_json::from_slice::<Value>(input).is_ok())
    );
}
