//! Who requires what among the packs found: the tree of an enabled set's requirements
//! (`pack tree`), the chains by which enabled packs need a pack (`pack why`), and the
//! installed packs nothing enabled needs that were installed only as a requirement
//! (`pack orphans`).

use std::collections::{BTreeMap, BTreeSet};

use super::set::{Found, PackSource};
use super::{PackSet, set};

/// The packs found, by id (the first of each id), with what each requires.
pub struct Graph {
    /// Pack id → (its version, where it is, the ids it requires).
    pub packs: BTreeMap<String, (String, PackSource, Vec<String>)>,
}

impl Graph {
    /// The graph of the packs of `folders`.
    #[must_use]
    pub fn of(folders: &set::Folders) -> Graph {
        let (found, _) = set::find(folders);
        Graph::from_found(&found)
    }

    fn from_found(found: &[Found]) -> Graph {
        let mut packs = BTreeMap::new();
        for f in found {
            packs.entry(f.pack.id().to_string()).or_insert_with(|| {
                (
                    f.pack.version.to_string(),
                    f.source,
                    f.pack
                        .manifest
                        .requires
                        .iter()
                        .map(|r| r.value.id.value.clone())
                        .collect(),
                )
            });
        }
        Graph { packs }
    }

    /// The packs that play with `set`: base packs and the enabled ones, by id.
    #[must_use]
    pub fn roots(&self, set: &PackSet) -> Vec<String> {
        self.packs
            .iter()
            .filter(|(id, (_, source, _))| *source == PackSource::Base || set.is_enabled(id))
            .map(|(id, _)| id.clone())
            .collect()
    }

    /// The packs of `roots` that no other pack of `roots` requires: the tops of the
    /// tree (all of them when requirements go round).
    #[must_use]
    pub fn tops(&self, roots: &[String]) -> Vec<String> {
        let required: BTreeSet<&str> = roots
            .iter()
            .filter_map(|r| self.packs.get(r))
            .flat_map(|(_, _, requires)| requires.iter().map(String::as_str))
            .collect();
        let tops: Vec<String> = roots
            .iter()
            .filter(|r| !required.contains(r.as_str()))
            .cloned()
            .collect();
        if tops.is_empty() {
            roots.to_vec()
        } else {
            tops
        }
    }

    /// The tree under `roots` as indented lines (`id version`); a pack shown already is
    /// marked `(above)`, a missing one `(not found)`.
    #[must_use]
    pub fn tree(&self, roots: &[String]) -> Vec<String> {
        let mut out = Vec::new();
        let mut shown = BTreeSet::new();
        for r in roots {
            self.walk(r, 0, &mut shown, &mut out);
        }
        out
    }

    fn walk(&self, id: &str, depth: usize, shown: &mut BTreeSet<String>, out: &mut Vec<String>) {
        let pad = "  ".repeat(depth);
        let Some((version, _, requires)) = self.packs.get(id) else {
            out.push(format!("{pad}{id} (not found)"));
            return;
        };
        if !shown.insert(id.to_string()) {
            out.push(format!("{pad}{id} {version} (above)"));
            return;
        }
        out.push(format!("{pad}{id} {version}"));
        // A requirement chain deeper than the loader allows is cut (it never loads).
        if depth < 64 {
            for r in requires {
                self.walk(r, depth + 1, shown, out);
            }
        }
    }

    /// Every chain by which a pack of `roots` requires `target` (each `root -> … ->
    /// target`), shortest first; none when nothing does.
    #[must_use]
    pub fn why(&self, roots: &[String], target: &str) -> Vec<Vec<String>> {
        let mut chains = Vec::new();
        for r in roots.iter().filter(|r| *r != target) {
            let mut path = vec![r.clone()];
            self.chains(target, &mut path, &mut chains);
        }
        chains.sort_by_key(Vec::len);
        chains.truncate(64);
        chains
    }

    fn chains(&self, target: &str, path: &mut Vec<String>, out: &mut Vec<Vec<String>>) {
        if out.len() >= 256 || path.len() > 64 {
            return;
        }
        let Some(at) = path.last().cloned() else {
            return;
        };
        let Some((_, _, requires)) = self.packs.get(&at) else {
            return;
        };
        for r in requires {
            if path.contains(r) {
                continue;
            }
            path.push(r.clone());
            if r == target {
                out.push(path.clone());
            } else {
                self.chains(target, path, out);
            }
            path.pop();
        }
    }

    /// The packs among those `roots` need that require `id` directly, by id (the Mods
    /// screen's "required by").
    #[must_use]
    pub fn required_by(&self, roots: &[String], id: &str) -> Vec<String> {
        self.needed(roots)
            .into_iter()
            .filter(|p| {
                self.packs
                    .get(p)
                    .is_some_and(|(_, _, requires)| requires.iter().any(|r| r == id))
            })
            .collect()
    }

    /// The packs `roots` need, themselves included.
    #[must_use]
    pub fn needed(&self, roots: &[String]) -> BTreeSet<String> {
        let mut needed = BTreeSet::new();
        let mut queue: Vec<String> = roots.to_vec();
        while let Some(id) = queue.pop() {
            if !needed.insert(id.clone()) {
                continue;
            }
            if let Some((_, _, requires)) = self.packs.get(&id) {
                queue.extend(requires.iter().cloned());
            }
        }
        needed
    }

    /// Installed packs that were installed only as a requirement (`as_requirement` says
    /// which) and that nothing else `set` plays with needs: enabled packs that were
    /// asked for, and base packs, are the roots.
    #[must_use]
    pub fn orphans(&self, set: &PackSet, as_requirement: impl Fn(&str) -> bool) -> Vec<String> {
        let candidates: BTreeSet<String> = self
            .packs
            .iter()
            .filter(|(id, (_, source, _))| *source == PackSource::Installed && as_requirement(id))
            .map(|(id, _)| id.clone())
            .collect();
        let roots: Vec<String> = self
            .roots(set)
            .into_iter()
            .filter(|r| !candidates.contains(r))
            .collect();
        let needed = self.needed(&roots);
        candidates
            .into_iter()
            .filter(|c| !needed.contains(c))
            .collect()
    }
}

/// The first `k` in `1..=n` at which `fails(k)` holds, given that it holds at `n` and not
/// at 0 and that it stays true once true (a prefix of the load order that breaks stays
/// broken as packs are added). `fails(n)` is checked first; then a binary search. At most
/// ⌈log2 n⌉ + 1 calls. `None` when `fails(n)` does not hold.
pub fn bisect(n: usize, mut fails: impl FnMut(usize) -> bool) -> Option<usize> {
    if n == 0 || !fails(n) {
        return None;
    }
    // Invariant: `fails(hi)`, and every k <= lo passes (lo = 0 by assumption).
    let (mut lo, mut hi) = (0usize, n);
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if fails(mid) {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    Some(hi)
}

#[cfg(test)]
mod tests {
    use super::bisect;

    #[test]
    fn bisect_finds_the_first_failing_prefix_within_its_bound() {
        for n in 1..=40usize {
            let bound = usize::BITS - (n - 1).leading_zeros(); // ⌈log2 n⌉
            for bad in 1..=n {
                let mut runs = 0;
                let found = bisect(n, |k| {
                    runs += 1;
                    k >= bad
                });
                assert_eq!(found, Some(bad), "n {n}, bad {bad}");
                assert!(runs <= bound as usize + 1, "n {n}: {runs} runs");
            }
            assert_eq!(bisect(n, |_| false), None);
        }
    }
}
