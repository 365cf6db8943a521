//! Coordinate ascent: how learned rankers (learning from questions, law routing) choose their weights.
//!
//! A handful of non-negative weights, an objective that is a step function of them (recall changes only when
//! a gold section crosses rank 10) and a few thousand questions: gradient methods have nothing to follow, a
//! full grid is too large, and coordinate ascent over a small grid per weight is what ranking research uses
//! for such cases. Ties keep the current value, so a weight moves only when it helps.

/// One weight to move: where it lives in `W`, and the values it may take.
pub type Coordinate<'a, W> = (fn(&mut W) -> &mut f32, &'a [f32]);

/// Weights from `start`, each coordinate tried at every value of its grid in turn, as long as a sweep
/// improves `objective` (at most three sweeps).
pub fn coordinate_ascent<W: Copy>(
    start: W,
    coordinates: &[Coordinate<W>],
    objective: impl Fn(&W) -> f64,
) -> W {
    let mut best = start;
    let mut best_score = objective(&best);
    for _ in 0..3 {
        let before = best_score;
        for (coordinate, grid) in coordinates {
            for &value in *grid {
                let mut w = best;
                *coordinate(&mut w) = value;
                let score = objective(&w);
                if score > best_score + 1e-9 {
                    (best, best_score) = (w, score);
                }
            }
        }
        if best_score <= before + 1e-9 {
            break;
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn climbs_to_the_grid_point_nearest_the_optimum_and_keeps_ties() {
        let grid = [0.0, 1.0, 2.0, 3.0];
        let coordinates: [Coordinate<(f32, f32)>; 2] =
            [(|w| &mut w.0, &grid), (|w| &mut w.1, &grid)];
        let best = coordinate_ascent((0.0, 0.0), &coordinates, |w| {
            -((w.0 - 2.2).powi(2) + (w.1 - 0.9).powi(2)) as f64
        });
        assert_eq!(best, (2.0, 1.0));
        // A flat objective moves nothing.
        assert_eq!(
            coordinate_ascent((3.0, 0.0), &coordinates, |_| 1.0),
            (3.0, 0.0)
        );
    }
}
