//! Names for people: an entry of the catalog looked up by its name (`push_row` or
//! `base:push_row`) with a did-you-mean suggestion when there is none, and `echo`, a value
//! quoted back in a message.

use super::catalog::Catalog;
use super::defs::Meta;
use super::ids::{AbilityId, AreaId, CardId, DeckId, TokenTypeId};

/// Why a name could not be resolved to a catalog entry.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum LookupError {
    /// No entry has that name.
    #[error("unknown {kind} '{name}'{}", did_you_mean(.suggestion.as_deref()))]
    Unknown {
        /// What was looked for (`card`, `token type`…).
        kind: &'static str,
        /// The name as written.
        name: String,
        /// The nearest existing name.
        suggestion: Option<String>,
    },
    /// Several packs define that id.
    #[error("'{name}' is ambiguous: it could be {}; write one of them in full", .candidates.join(" or "))]
    Ambiguous {
        /// The name as written.
        name: String,
        /// The qualified candidates.
        candidates: Vec<String>,
    },
}

/// The longest name [`nearest`] compares, in bytes.
pub const MAX_SUGGESTED: usize = 128;

/// The longest text [`echo`] shows, in characters.
pub const MAX_ECHO: usize = 80;

/// A value quoted back in a message: control characters escaped (so it cannot forge a
/// new line or move the cursor) and cut after [`MAX_ECHO`] characters with `…`.
#[must_use]
pub fn echo(text: &str) -> String {
    echo_within(text, MAX_ECHO)
}

/// [`echo`] with another length: control characters escaped, cut after `max`
/// characters with `…`.
#[must_use]
pub fn echo_within(text: &str, max: usize) -> String {
    let mut out = String::new();
    for (i, c) in text.chars().enumerate() {
        if i == max {
            out.push('…');
            break;
        }
        if c.is_control() {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    out
}

fn did_you_mean(s: Option<&str>) -> String {
    s.map(|s| format!(" (did you mean '{s}'?)"))
        .unwrap_or_default()
}

/// The candidate closest to `name`, if it is close enough to be a likely typo: a few
/// edits away (a swap of two letters counts as one) or sharing most of its letters in order.
///
/// The work is bounded before it starts: names longer than [`MAX_SUGGESTED`] bytes (no id
/// is that long) get no suggestion, so a hostile name costs nothing to refuse.
#[must_use]
pub fn nearest<'a>(name: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<String> {
    if name.len() > MAX_SUGGESTED {
        return None;
    }
    let allowed = (name.chars().count() / 3).max(1);
    candidates
        .into_iter()
        .filter(|c| *c != name && c.len() <= MAX_SUGGESTED)
        .filter_map(|c| {
            let edits = strsim::damerau_levenshtein(name, c);
            let similarity = strsim::jaro_winkler(name, c);
            (edits <= allowed || similarity >= 0.85).then_some((edits, -similarity, c))
        })
        .min_by(|a, b| a.0.cmp(&b.0).then(a.1.total_cmp(&b.1)))
        .map(|(_, _, c)| c.to_string())
}

fn lookup<'a>(
    kind: &'static str,
    name: &str,
    metas: impl Iterator<Item = &'a Meta> + Clone,
) -> Result<usize, LookupError> {
    let (pack, id) = match name.split_once(':') {
        Some((pack, id)) => (Some(pack), id),
        None => (None, name),
    };
    let matches: Vec<usize> = metas
        .clone()
        .enumerate()
        .filter(|(_, m)| m.id == id && pack.is_none_or(|p| m.origin.pack == p))
        .map(|(i, _)| i)
        .collect();
    match matches.as_slice() {
        [one] => Ok(*one),
        [] => {
            let keys: Vec<String> = metas
                .map(|m| {
                    if pack.is_some() {
                        m.key()
                    } else {
                        m.id.clone()
                    }
                })
                .collect();
            Err(LookupError::Unknown {
                kind,
                name: echo(name),
                suggestion: nearest(name, keys.iter().map(String::as_str)),
            })
        }
        many => {
            let all: Vec<&Meta> = metas.collect();
            Err(LookupError::Ambiguous {
                name: echo(name),
                candidates: many.iter().map(|&i| all[i].key()).collect(),
            })
        }
    }
}

/// The catalog's entries by name.
impl Catalog {
    /// The card called `name` (`push_row` or `base:push_row`).
    pub fn card_named(&self, name: &str) -> Result<CardId, LookupError> {
        lookup("card", name, self.cards().iter().map(|c| &c.meta)).map(CardId::from_index)
    }

    /// The token type called `name`.
    pub fn token_type_named(&self, name: &str) -> Result<TokenTypeId, LookupError> {
        lookup(
            "token type",
            name,
            self.token_types().iter().map(|t| &t.meta),
        )
        .map(TokenTypeId::from_index)
    }

    /// The ability called `name`.
    pub fn ability_named(&self, name: &str) -> Result<AbilityId, LookupError> {
        lookup("ability", name, self.abilities().iter().map(|a| &a.meta)).map(AbilityId::from_index)
    }

    /// The deck called `name`.
    pub fn deck_named(&self, name: &str) -> Result<DeckId, LookupError> {
        lookup("deck", name, self.decks().iter().map(|d| &d.meta)).map(DeckId::from_index)
    }

    /// The area called `name`.
    pub fn area_named(&self, name: &str) -> Result<AreaId, LookupError> {
        lookup("area", name, self.areas().iter().map(|a| &a.meta)).map(AreaId::from_index)
    }
}
