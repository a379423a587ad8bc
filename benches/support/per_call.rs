//! Per-call times for the ratios printed after the criterion groups, timed
//! the way criterion's batched loops are: inputs made before the clock
//! starts, a few hundred at a time so they are still in cache (as a
//! provider's parsed response is when its calls run), and outputs dropped
//! after it stops. Timing one long loop over 100,000 inputs made up front
//! measures cache misses on the inputs more than the call paths, and
//! punishes the path whose input has more heap parts.

use std::future::Future;
use std::time::{Duration, Instant};

/// Inputs made per timed stretch.
const CHUNK: u32 = 256;
/// Timed stretches per round.
const CHUNKS: u32 = 400;
/// Rounds; the fastest counts, as the least disturbed by the machine.
const ROUNDS: usize = 5;

/// Microseconds per call of `run`, the best of [`ROUNDS`] rounds of
/// `CHUNK * CHUNKS` calls.
pub(crate) fn micros_per_call<I, O, Fut>(
    rt: &tokio::runtime::Runtime,
    make: impl Fn() -> I,
    run: impl Fn(I) -> Fut,
) -> f64
where
    Fut: Future<Output = O>,
{
    let mut best = Duration::MAX;
    for _ in 0..ROUNDS {
        let mut total = Duration::ZERO;
        for _ in 0..CHUNKS {
            let inputs: Vec<I> = (0..CHUNK).map(|_| make()).collect();
            let mut outputs = Vec::with_capacity(inputs.len());
            total += rt.block_on(async {
                let start = Instant::now();
                for input in inputs {
                    outputs.push(run(input).await);
                }
                start.elapsed()
            });
            drop(outputs);
        }
        best = best.min(total);
    }
    best.as_secs_f64() * 1e6 / f64::from(CHUNK * CHUNKS)
}
