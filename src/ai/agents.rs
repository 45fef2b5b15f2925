//! The agents below MCTS: `random`, `greedy` (the reference: the original game's AI),
//! `easy` (greedy ranking, rank-weighted random pick) and `normal` (two plies).

use rand::RngExt;
use rand_pcg::Pcg32;

use super::eval::evaluate;
use super::{Agent, Brain, Rated, ScriptLimits, Worlds};
use crate::observe::Observation;
use crate::rules::{GameState, Move, Seat};

/// Play `mv` on a copy of `state`; `None` when the engine refuses it.
pub(crate) fn after(brain: &Brain<'_>, state: &GameState, mv: Move) -> Option<GameState> {
    let mut next = state.clone();
    brain.play_lookahead(&mut next, mv).ok()?;
    Some(next)
}

/// The immediate change in (own income − opponent income) a move makes, read from the
/// scores: both seats score their income right after the move.
fn swing(before: &GameState, next: &GameState, seat: Seat) -> i64 {
    let gain = |s: Seat| next.score(s) - before.score(s);
    gain(seat) - gain(seat.other())
}

/// Pick uniformly among the best-rated moves.
fn best(rated: &[Rated], rng: &mut Pcg32) -> Option<Move> {
    let top = rated
        .iter()
        .map(|r| r.value)
        .fold(f64::NEG_INFINITY, f64::max);
    let ties: Vec<&Rated> = rated.iter().filter(|r| r.value >= top).collect();
    if ties.is_empty() {
        return None;
    }
    Some(ties[rng.random_range(0..ties.len())].mv)
}

/// A uniformly random legal move.
pub struct RandomAgent {
    /// The agent's generator.
    pub rng: Pcg32,
}

impl Agent for RandomAgent {
    fn choose(&mut self, brain: &Brain<'_>, obs: &Observation) -> Option<Move> {
        let moves = brain.engine().legal_moves(obs.state());
        (!moves.is_empty()).then(|| moves[self.rng.random_range(0..moves.len())])
    }

    fn rate(&mut self, brain: &Brain<'_>, obs: &Observation) -> Vec<Rated> {
        brain
            .engine()
            .legal_moves(obs.state())
            .into_iter()
            .map(|mv| Rated {
                mv,
                value: 0.0,
                visits: 0,
            })
            .collect()
    }
}

/// Every legal move rated one ply deep by its income swing, within `scripts` for all
/// their scripts together: once spent, moves that would run a script are left out.
fn greedy_ratings(brain: &Brain<'_>, obs: &Observation, scripts: ScriptLimits) -> Vec<Rated> {
    let _deciding = brain.decide(scripts);
    let state = obs.state();
    let seat = obs.seat();
    let mut scratch = state.clone();
    brain
        .engine()
        .legal_moves(state)
        .into_iter()
        .filter_map(|mv| {
            scratch.clone_from(state);
            brain.play_lookahead(&mut scratch, mv).ok()?;
            #[allow(clippy::cast_precision_loss)]
            let value = swing(state, &scratch, seat) as f64;
            Some(Rated {
                mv,
                value,
                visits: 0,
            })
        })
        .collect()
}

/// The reference: the best immediate income swing, ties broken at random.
pub struct GreedyAgent {
    /// The agent's generator.
    pub rng: Pcg32,
    /// What one decision may spend on scripts.
    pub scripts: ScriptLimits,
}

impl Agent for GreedyAgent {
    fn choose(&mut self, brain: &Brain<'_>, obs: &Observation) -> Option<Move> {
        best(&greedy_ratings(brain, obs, self.scripts), &mut self.rng)
    }

    fn rate(&mut self, brain: &Brain<'_>, obs: &Observation) -> Vec<Rated> {
        greedy_ratings(brain, obs, self.scripts)
    }
}

/// Greedy's ranking, then a random pick weighted by rank: P(i) ∝ (n − i)^k.
pub struct EasyAgent {
    /// The agent's generator.
    pub rng: Pcg32,
    /// The exponent: higher plays closer to greedy.
    pub k: f64,
    /// What one decision may spend on scripts.
    pub scripts: ScriptLimits,
}

impl Agent for EasyAgent {
    fn choose(&mut self, brain: &Brain<'_>, obs: &Observation) -> Option<Move> {
        let mut rated = greedy_ratings(brain, obs, self.scripts);
        if rated.is_empty() {
            return None;
        }
        rated.sort_by(|a, b| b.value.total_cmp(&a.value));
        let n = rated.len();
        #[allow(clippy::cast_precision_loss)]
        let weights: Vec<f64> = (0..n).map(|i| ((n - i) as f64).powf(self.k)).collect();
        let total: f64 = weights.iter().sum();
        let mut pick = self.rng.random::<f64>() * total;
        for (r, w) in rated.iter().zip(&weights) {
            if pick < *w {
                return Some(r.mv);
            }
            pick -= w;
        }
        rated.last().map(|r| r.mv)
    }

    fn rate(&mut self, brain: &Brain<'_>, obs: &Observation) -> Vec<Rated> {
        greedy_ratings(brain, obs, self.scripts)
    }
}

/// Two plies: each own move answered by the opponent's best reply (in one sampled
/// determinization of their hand), positions valued by [`evaluate`].
pub struct NormalAgent {
    /// The agent's generator.
    pub rng: Pcg32,
    /// What one decision may spend on scripts.
    pub scripts: ScriptLimits,
}

impl NormalAgent {
    /// Every own move with its two-ply value. With `prune`, a move whose reply already
    /// shows it cannot beat the best so far stops early (its value is then an upper bound).
    ///
    /// Once the decision's script budget is spent, the move being rated then is left out
    /// (its replies were cut short) unless it is the only one, and no more are rated.
    fn ratings(&mut self, brain: &Brain<'_>, obs: &Observation, prune: bool) -> Vec<Rated> {
        let _deciding = brain.decide(self.scripts);
        let seat = obs.seat();
        let world = Worlds::new(obs).determinize(brain, &mut self.rng);
        let mut rated = Vec::new();
        let mut best_so_far = f64::NEG_INFINITY;
        let mut reply_state = world.clone();
        for mv in brain.engine().legal_moves(&world) {
            let Some(next) = after(brain, &world, mv) else {
                continue;
            };
            let value = if next.is_over() || next.turn() == seat {
                evaluate(brain, &next, seat)
            } else {
                // The opponent's best reply; stop early once this move cannot beat the best.
                let mut worst = f64::INFINITY;
                for reply in brain.engine().legal_moves(&next) {
                    reply_state.clone_from(&next);
                    if brain.play_lookahead(&mut reply_state, reply).is_err() {
                        continue;
                    }
                    worst = worst.min(evaluate(brain, &reply_state, seat));
                    if prune && worst < best_so_far {
                        break;
                    }
                }
                if worst.is_finite() {
                    worst
                } else {
                    evaluate(brain, &next, seat)
                }
            };
            let cut = brain.decision_spent();
            if cut && !rated.is_empty() {
                break;
            }
            best_so_far = best_so_far.max(value);
            rated.push(Rated {
                mv,
                value,
                visits: 0,
            });
            if cut {
                break;
            }
        }
        rated
    }
}

impl Agent for NormalAgent {
    fn choose(&mut self, brain: &Brain<'_>, obs: &Observation) -> Option<Move> {
        let rated = self.ratings(brain, obs, true);
        best(&rated, &mut self.rng)
    }

    fn rate(&mut self, brain: &Brain<'_>, obs: &Observation) -> Vec<Rated> {
        self.ratings(brain, obs, false)
    }
}
