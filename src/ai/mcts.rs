//! `hard`: information-set Monte Carlo tree search through the real engine.
//!
//! Every iteration samples a determinization (a full state consistent with what the seat
//! has seen, see [`Worlds::determinize`]) and walks one tree whose edges are
//! (card, cell) — what the table sees of a move — so the same tree serves every sampled
//! opponent hand. Selection is UCB with availability counts (an edge counts as tried only
//! in the worlds where it was playable); leaves are valued by the generic evaluation.
//! Anytime: a time budget per move, or an iteration budget for reproducible runs. Two
//! trees are searched at once (root parallelism) and their root statistics merged, each
//! thread with its own script host.
//!
//! A node's searched moves give every card in hand an equal share of its places; the trees
//! count the bytes they hold and stop growing at the decision's cap ([`DECISION_MEMORY`]).

use std::collections::HashMap;
use std::time::{Duration, Instant};

use rand::{RngExt, SeedableRng};
use rand_pcg::Pcg32;

use super::eval::evaluate;
use super::{Agent, Brain, Rated, ScriptLimits, Spent, Worlds, hooks_for};
use crate::observe::Observation;
use crate::rules::never;
use crate::rules::{CardId, Cell, GameState, Move, Play, Seat};

/// How long `hard` may think.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Budget {
    /// Wall time per move.
    Time(Duration),
    /// Iterations per move (over both trees): reproducible for a given seed.
    Iterations(u32),
}

/// What the table sees of a move: the card and the cell.
type Key = (CardId, Cell);

/// The seat to move's hand: each stack's top card, by stack.
type Hand = Vec<(u8, CardId)>;

struct Node {
    /// Who made the move leading here.
    mover: Seat,
    /// The candidate moves of the seat to move here, ranked once per hand it may hold:
    /// the board at a node is the same in every sampled world (it follows from the public
    /// moves that lead to it), so what a move does depends only on the card played. The
    /// searching seat's own hand is known, so its nodes keep one entry; an opponent's
    /// node keeps one per hand the sampled worlds gave it.
    ranked: HashMap<Hand, Vec<(Key, Move)>>,
    children: HashMap<Key, u32>,
    visits: u32,
    /// Times this node's move was playable when its parent was visited.
    available: u32,
    /// Sum of rewards for `mover`.
    reward: f64,
}

impl Node {
    fn new(mover: Seat) -> Node {
        Node {
            mover,
            ranked: HashMap::new(),
            children: HashMap::new(),
            visits: 0,
            available: 0,
            reward: 0.0,
        }
    }
}

/// Root statistics of one search: per root move, visits and mean reward.
type RootStats = Vec<(Key, u32, f64)>;

/// The searching agent.
pub struct HardAgent {
    /// The agent's generator (seeds each tree).
    pub rng: Pcg32,
    /// How long to think.
    pub budget: Budget,
    /// UCB exploration constant.
    pub exploration: f64,
    /// What one decision may spend on scripts (each tree half of the instructions).
    pub scripts: ScriptLimits,
    /// Bytes one decision's search trees may hold, both together (each tree half):
    /// a tree that reaches its half stops growing and the decision is made from what the
    /// trees know. [`DECISION_MEMORY`] for the agents of [`super::agent`].
    pub memory: usize,
}

/// What the search trees of one `hard` decision may hold, both trees together: 32 MiB.
/// A game's AI makes one decision at a time and drops its trees after it, so this is also
/// what a game's AI search holds at most.
pub const DECISION_MEMORY: usize = 32 << 20;

impl HardAgent {
    /// Search and return per-move statistics merged over both trees.
    fn search(&mut self, brain: &Brain<'_>, obs: &Observation) -> RootStats {
        let seeds = [self.rng.random::<u64>(), self.rng.random::<u64>()];
        let (budget, exploration) = (self.budget, self.exploration);
        let tree_memory = self.memory / 2;
        let catalog = brain.engine().catalog();
        let limit = match budget {
            Budget::Time(t) => Limit::Until(Instant::now() + t),
            Budget::Iterations(n) => Limit::Count(n.div_ceil(2).max(1)),
        };
        // Each tree starts from what this brain remembers of runaway cards and learns on
        // its own, with half the decision's script budget, so neither depends on how
        // far the other got: what they learned is merged afterwards, in a fixed order.
        let spent = brain.spent();
        // Both trees draw from one `Worlds`: what the plays say of the opponent's deck is
        // worked out once per decision, by the tree that draws first.
        let worlds = Worlds::new(obs);
        let (mut scripts_limits, started) = (self.scripts, Instant::now());
        if let Budget::Time(t) = budget {
            // A search told to think for longer than the scripts' wall time may: its own
            // clock stops it, with 100 ms for the last iteration to finish.
            let think = u32::try_from(t.as_millis().saturating_add(100)).unwrap_or(u32::MAX);
            scripts_limits.wall_ms = scripts_limits.wall_ms.max(think);
        }
        let tree = |seed: u64| -> Option<(RootStats, Spent, u64)> {
            let scripts = hooks_for(catalog);
            if catalog.has_scripts() && !scripts.loaded() {
                // No script host on this thread (the process's script memory is taken):
                // the caller searches this tree itself.
                return None;
            }
            let brain = scripts.brain_sharing(catalog, &spent);
            let stats = {
                let _deciding = brain.decide_part(scripts_limits, 2, started);
                Tree::new(obs.seat(), tree_memory).run(&brain, &worlds, seed, limit, exploration)
            };
            Some((stats, brain.spent(), brain.cuts()))
        };
        // Inside a pool of ours (simulation) the second tree goes to another worker;
        // elsewhere it gets a thread of its own with the stack hooks need.
        let (a, b) = if rayon::current_thread_index().is_some() {
            rayon::join(|| tree(seeds[0]), || tree(seeds[1]))
        } else {
            std::thread::scope(|scope| {
                let second =
                    crate::script::threads::spawn_scoped(scope, "tokensmith-search", || {
                        tree(seeds[1])
                    });
                let a = tree(seeds[0]);
                let b = match second {
                    Ok(handle) => handle.join().ok().flatten(),
                    Err(_) => None,
                };
                (a, b)
            })
        };
        // A tree that found no script host runs here, after the other (the calling
        // thread's host is free again by then).
        let empty = || (RootStats::new(), Spent::new(), 0);
        let a = a.or_else(|| tree(seeds[0])).unwrap_or_else(empty);
        let b = b.or_else(|| tree(seeds[1])).unwrap_or_else(empty);
        brain.learn(&a.1);
        brain.learn(&b.1);
        brain.add_cuts(u64::from(a.2 + b.2 > 0));
        merge(a.0, b.0)
    }
}

#[derive(Clone, Copy)]
enum Limit {
    Until(Instant),
    Count(u32),
}

fn merge(a: RootStats, b: RootStats) -> RootStats {
    let mut all: HashMap<Key, (u32, f64)> = HashMap::new();
    for (key, visits, mean) in a.into_iter().chain(b) {
        let entry = all.entry(key).or_insert((0, 0.0));
        entry.1 += mean * f64::from(visits);
        entry.0 += visits;
    }
    let mut out: RootStats = all
        .into_iter()
        .map(|(k, (v, total))| (k, v, if v > 0 { total / f64::from(v) } else { 0.0 }))
        .collect();
    // A fixed order, so equal statistics give the same choice in every run.
    out.sort_by(|x, y| {
        y.1.cmp(&x.1)
            .then(y.2.total_cmp(&x.2))
            .then((x.0.0, x.0.1).cmp(&(y.0.0, y.0.1)))
    });
    out
}

struct Tree {
    nodes: Vec<Node>,
    root_seat: Seat,
    /// Bytes the tree holds, as [`Tree::node_bytes`] and [`Tree::ranked_bytes`] count
    /// them (the node table and its growth included).
    held: usize,
    /// Bytes it may hold: once a node or a ranking more would pass it, the search stops.
    cap: usize,
}

/// Bytes a hash table holds per entry at most: hashbrown keeps at most 8 entries in 7
/// slots past its smallest size (rounded to a power of two, so up to twice the entries),
/// each with one control byte.
const fn table_bytes<T>(entries: usize) -> usize {
    2 * entries.next_power_of_two() * (size_of::<T>() + 1) + 16
}

impl Tree {
    fn new(root_seat: Seat, cap: usize) -> Tree {
        let mut tree = Tree {
            nodes: Vec::new(),
            root_seat,
            held: 0,
            cap,
        };
        tree.held = Tree::node_bytes();
        tree.nodes.push(Node::new(root_seat.other()));
        tree
    }

    /// What one node holds at most: its place in the node table (which may be up to
    /// twice its length) and its table of children (at most [`WIDTH`] of them).
    const fn node_bytes() -> usize {
        2 * size_of::<Node>() + table_bytes::<(Key, u32)>(WIDTH)
    }

    /// What one ranking of a node's moves holds: the hand and the moves, as allocated,
    /// and its place in the node's table of rankings.
    fn ranked_bytes(hand: &Hand, moves: &Vec<(Key, Move)>) -> usize {
        hand.capacity() * size_of::<(u8, CardId)>()
            + moves.capacity() * size_of::<(Key, Move)>()
            + 2 * (size_of::<(Hand, Vec<(Key, Move)>)>() + 1)
    }

    /// Whether `bytes` more would pass the cap (the search stops then).
    fn full_with(&self, bytes: usize) -> bool {
        self.held.saturating_add(bytes) > self.cap
    }

    fn run(
        &mut self,
        brain: &Brain<'_>,
        worlds: &Worlds<'_>,
        seed: u64,
        limit: Limit,
        exploration: f64,
    ) -> RootStats {
        let mut rng = Pcg32::seed_from_u64(seed);
        let mut iterations = 0u32;
        let mut path = Vec::with_capacity(64);
        let mut scratch = worlds.observation().state().clone();
        let mut full = false;
        loop {
            // Out of script budget, or the tree holds all it may: finish with what the
            // tree knows.
            if (brain.decision_spent() || full) && iterations > 0 {
                break;
            }
            match limit {
                Limit::Count(n) if iterations >= n => break,
                Limit::Until(t)
                    // Also after the first: its determinization may have rated positions.
                    if (iterations.is_multiple_of(16) || iterations == 1)
                        && Instant::now() >= t
                        && iterations > 0 =>
                {
                    break;
                }
                _ => {}
            }
            iterations += 1;
            let mut state = worlds.determinize(brain, &mut rng);
            path.clear();
            path.push(0u32);
            let mut node = 0u32;
            while !state.is_over() {
                let hand: Hand = state.seat(state.turn()).hand().collect();
                let moves = if let Some(cached) = self.nodes[node as usize].ranked.get(&hand) {
                    cached.clone()
                } else {
                    let fresh = ranked_moves(brain, &state, &mut scratch, WIDTH);
                    let bytes = Tree::ranked_bytes(&hand, &fresh);
                    // The root's own moves are always ranked and tried, so a decision
                    // always has moves to choose from.
                    if node != 0 && self.full_with(bytes) {
                        // The tree holds all it may: this iteration ends at this node,
                        // and the search with it.
                        full = true;
                        break;
                    }
                    self.held += bytes;
                    self.nodes[node as usize].ranked.insert(hand, fresh.clone());
                    fresh
                };
                if moves.is_empty() {
                    break;
                }
                let mut untried = Vec::new();
                let mut best: Option<(f64, u32, Move)> = None;
                let parent_node = node as usize;
                for &(key, mv) in &moves {
                    match self.nodes[parent_node].children.get(&key).copied() {
                        None => untried.push((key, mv)),
                        Some(child) => {
                            let c = &mut self.nodes[child as usize];
                            c.available += 1;
                            let mean = c.reward / f64::from(c.visits.max(1));
                            let ucb = mean
                                + exploration
                                    * (f64::from(c.available).ln() / f64::from(c.visits.max(1)))
                                        .sqrt();
                            if best.is_none_or(|(b, _, _)| ucb > b) {
                                best = Some((ucb, child, mv));
                            }
                        }
                    }
                }
                let mover = state.turn();
                if let Some(&(key, mv)) = untried.first() {
                    if node != 0 && self.full_with(Tree::node_bytes()) {
                        full = true;
                        break;
                    }
                    if brain.play_lookahead(&mut state, mv).is_err() {
                        break;
                    }
                    let child = u32::try_from(self.nodes.len()).unwrap_or_else(|_| {
                        never!(
                            u32::MAX,
                            "{} nodes: one a u32 iteration at most",
                            self.nodes.len()
                        )
                    });
                    let mut n = Node::new(mover);
                    n.available = 1;
                    self.nodes.push(n);
                    self.held += Tree::node_bytes();
                    self.nodes[parent_node].children.insert(key, child);
                    path.push(child);
                    break;
                }
                let Some((_, child, mv)) = best else { break };
                if brain.play_lookahead(&mut state, mv).is_err() {
                    break;
                }
                path.push(child);
                node = child;
            }
            let value = reward(brain, &state, self.root_seat);
            for &n in &path {
                let node = &mut self.nodes[n as usize];
                node.visits += 1;
                node.reward += if node.mover == self.root_seat {
                    value
                } else {
                    1.0 - value
                };
            }
        }
        self.nodes[0]
            .children
            .iter()
            .map(|(&key, &child)| {
                let c = &self.nodes[child as usize];
                (key, c.visits, c.reward / f64::from(c.visits.max(1)))
            })
            .collect()
    }
}

/// How many moves the search considers at each node.
const WIDTH: usize = 8;

/// The `width` moves the search considers for the seat to move, each with its public
/// key: every card in hand gets an equal share of the places (at least one), filled with
/// its cells of best immediate income swing; places left over go to the next best moves
/// of any card. Best first. Ranking by what the engine says a move does keeps the
/// search generic while it looks deep instead of wide, and the shares keep a card whose
/// worth shows only later (a token that grows, a trap) from being crowded out by another
/// card's many cells of larger immediate swing.
fn ranked_moves(
    brain: &Brain<'_>,
    state: &GameState,
    scratch: &mut GameState,
    width: usize,
) -> Vec<(Key, Move)> {
    let seat = state.turn();
    let mut rated: Vec<(i64, Key, Move)> = brain
        .engine()
        .legal_moves(state)
        .into_iter()
        .filter_map(|mv| {
            let card = brain.engine().card_played(state, mv).ok()?;
            scratch.clone_from(state);
            brain.play_lookahead(scratch, mv).ok()?;
            let gain = |s: Seat| scratch.score(s) - state.score(s);
            Some((gain(seat) - gain(seat.other()), (card, mv.cell), mv))
        })
        .collect();
    let order = |a: &(i64, Key, Move), b: &(i64, Key, Move)| {
        b.0.cmp(&a.0).then((a.1.0, a.1.1).cmp(&(b.1.0, b.1.1)))
    };
    rated.sort_by(order);
    let mut cards: Vec<CardId> = rated.iter().map(|r| r.1.0).collect();
    cards.sort_unstable();
    cards.dedup();
    let share = (width / cards.len().max(1)).max(1);
    let mut taken: HashMap<CardId, usize> = HashMap::with_capacity(cards.len());
    let (mut chosen, mut rest): (Vec<_>, Vec<_>) = rated.into_iter().partition(|r| {
        let n = taken.entry(r.1.0).or_insert(0);
        *n += 1;
        *n <= share
    });
    chosen.truncate(width);
    rest.truncate(width - chosen.len());
    chosen.extend(rest);
    chosen.sort_by(order);
    chosen.into_iter().map(|(_, k, m)| (k, m)).collect()
}

/// A position's value for `seat` in [0, 1]: 1 a win, 0 a loss, the generic evaluation
/// squashed in between.
fn reward(brain: &Brain<'_>, state: &GameState, seat: Seat) -> f64 {
    if let Some(outcome) = state.outcome() {
        return match outcome.winner {
            Some(w) if w == seat => 1.0,
            Some(_) => 0.0,
            None => 0.5,
        };
    }
    #[allow(clippy::cast_precision_loss)]
    let scale = (brain.engine().catalog().rules().score_limit as f64 / 20.0).max(10.0);
    0.5 + 0.5 * (evaluate(brain, state, seat) / scale).tanh()
}

fn to_move(obs: &Observation, key: Key) -> Option<Move> {
    let seat = obs.seat();
    let stack = obs.state().seat(seat).stack_of(key.0)?;
    Some(Move {
        seat,
        play: Play::Stack(stack),
        cell: key.1,
    })
}

impl Agent for HardAgent {
    fn choose(&mut self, brain: &Brain<'_>, obs: &Observation) -> Option<Move> {
        let stats = self.search(brain, obs);
        stats.iter().find_map(|&(key, _, _)| to_move(obs, key))
    }

    fn rate(&mut self, brain: &Brain<'_>, obs: &Observation) -> Vec<Rated> {
        self.search(brain, obs)
            .into_iter()
            .filter_map(|(key, visits, mean)| {
                to_move(obs, key).map(|mv| Rated {
                    mv,
                    value: mean,
                    visits,
                })
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_card_in_hand_gets_its_share_of_the_searched_moves() {
        let base = crate::content::base_for_tests();
        let deck = base
            .deck_named("starter")
            .map(|d| base.deck(d).stacks.clone())
            .unwrap_or_else(|e| panic!("{e}"));
        // One card of the opening hand made worth far more than the others: by immediate
        // swing alone its cells would fill every place.
        let strong = deck[0][0];
        let catalog = base.edited(|p| p.cards[strong.index()].value = 50);
        let scripts = crate::ai::hooks_for(&catalog);
        let brain = scripts.brain(&catalog);
        let state = brain
            .engine()
            .new_game([&deck, &deck], 7, &mut Vec::new())
            .unwrap_or_else(|e| panic!("{e}"));
        let mut scratch = state.clone();
        let moves = ranked_moves(&brain, &state, &mut scratch, WIDTH);
        assert_eq!(moves.len(), WIDTH);
        let hand: Vec<CardId> = state.seat(state.turn()).hand().map(|(_, c)| c).collect();
        let share = WIDTH / hand.len();
        for card in &hand {
            let n = moves.iter().filter(|((c, _), _)| c == card).count();
            assert!(n >= share, "{card:?} has {n} of {WIDTH} places");
        }
        // Best first: the strong card's moves lead.
        assert_eq!(moves[0].0.0, strong);
    }

    /// A decision told to search without end (an iteration budget no search reaches)
    /// stops when its trees hold what they may, and still chooses a move.
    #[test]
    fn a_search_stops_growing_at_its_memory_cap() {
        let base = crate::content::base_for_tests();
        let deck = base
            .deck_named("starter")
            .map(|d| base.deck(d).stacks.clone())
            .unwrap_or_else(|e| panic!("{e}"));
        let scripts = crate::ai::hooks_for(&base);
        let brain = scripts.brain(&base);
        let state = brain
            .engine()
            .new_game([&deck, &deck], 3, &mut Vec::new())
            .unwrap_or_else(|e| panic!("{e}"));
        let obs = Observation::new(&state, state.turn(), &crate::observe::History::new(), false);
        let cap = 256 << 10;
        let mut tree = Tree::new(obs.seat(), cap);
        let stats = tree.run(&brain, &Worlds::new(&obs), 11, Limit::Count(u32::MAX), 0.15);
        assert!(!stats.is_empty(), "the search chose nothing");
        // Beyond the cap only the root's own ranking and its children (tried however full
        // the tree is): at most WIDTH nodes and one ranking.
        let nodes_at_most = cap / Tree::node_bytes() + WIDTH + 1;
        assert!(
            tree.nodes.len() <= nodes_at_most,
            "{} nodes, at most {nodes_at_most}",
            tree.nodes.len()
        );
        let rankings: usize = tree.nodes.iter().map(|n| n.ranked.len()).sum();
        assert!(tree.held <= cap + (WIDTH + 1) * Tree::node_bytes() + 4096);
        // It did fill up: the cap, not the budget, stopped it.
        assert!(
            tree.held + Tree::node_bytes() + 4096 > cap,
            "{} bytes held of {cap}, {} nodes, {rankings} rankings",
            tree.held,
            tree.nodes.len()
        );

        // The same through the agent, with the budget of a decision that never ends.
        let mut agent = HardAgent {
            rng: Pcg32::seed_from_u64(5),
            budget: Budget::Iterations(u32::MAX),
            exploration: 0.15,
            scripts: ScriptLimits::DEFAULT,
            memory: 2 * cap,
        };
        assert!(agent.choose(&brain, &obs).is_some());
    }
}
