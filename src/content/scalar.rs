//! Types written as one YAML scalar (a number or a word: a version, an amount, a winner)
//! read through one visitor: each type gives what it expects and how it reads a
//! [`Scalar`]; the words of a refusal are serde's, which the YAML reader turns into the
//! designer's.

use std::fmt;
use std::marker::PhantomData;

use serde::de::{self, Deserializer, Unexpected, Visitor};

/// One scalar as it was written.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Scalar<'a> {
    /// An integer that fits `i64`.
    Int(i64),
    /// A larger positive integer.
    Big(u64),
    /// A number with a fraction or an exponent.
    Float(f64),
    /// Text.
    Str(&'a str),
}

impl Scalar<'_> {
    fn unexpected(&self) -> Unexpected<'_> {
        match *self {
            Scalar::Int(v) => Unexpected::Signed(v),
            Scalar::Big(v) => Unexpected::Unsigned(v),
            Scalar::Float(v) => Unexpected::Float(v),
            Scalar::Str(v) => Unexpected::Str(v),
        }
    }
}

/// Why a type refused a scalar.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Refused {
    /// Not the kind of value it takes (a number where a word goes).
    WrongType,
    /// The right kind, but not a value it takes.
    Invalid,
    /// A word it does not know; these are the ones it does.
    Unknown(&'static [&'static str]),
    /// Refused in these words.
    Custom(&'static str),
}

/// Read a type written as one scalar: `expecting` says what is wanted ("1, 2, `draw` or
/// null"), `read` turns a scalar into the value or refuses it. Lists and mappings are
/// refused as the wrong type.
pub fn scalar<'de, D: Deserializer<'de>, T>(
    d: D,
    expecting: &'static str,
    read: fn(Scalar<'_>) -> Result<T, Refused>,
) -> Result<T, D::Error> {
    d.deserialize_any(ScalarVisitor {
        expecting,
        read,
        out: PhantomData,
    })
}

struct ScalarVisitor<T> {
    expecting: &'static str,
    read: fn(Scalar<'_>) -> Result<T, Refused>,
    out: PhantomData<T>,
}

impl<T> ScalarVisitor<T> {
    fn take<E: de::Error>(&self, s: Scalar<'_>) -> Result<T, E> {
        match ((self.read)(s), s) {
            (Ok(v), _) => Ok(v),
            (Err(Refused::WrongType), _) => Err(E::invalid_type(s.unexpected(), self)),
            (Err(Refused::Unknown(known)), Scalar::Str(word)) => {
                Err(E::unknown_variant(word, known))
            }
            (Err(Refused::Invalid | Refused::Unknown(_)), _) => {
                Err(E::invalid_value(s.unexpected(), self))
            }
            (Err(Refused::Custom(words)), _) => Err(E::custom(words)),
        }
    }
}

impl<T> Visitor<'_> for ScalarVisitor<T> {
    type Value = T;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.expecting)
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<T, E> {
        self.take(Scalar::Int(v))
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<T, E> {
        match i64::try_from(v) {
            Ok(small) => self.take(Scalar::Int(small)),
            Err(_) => self.take(Scalar::Big(v)),
        }
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<T, E> {
        self.take(Scalar::Float(v))
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<T, E> {
        self.take(Scalar::Str(v))
    }
}

#[cfg(test)]
mod tests {
    use super::{Refused, Scalar, scalar};
    use crate::content::yaml::{from_node, parse};

    /// A type like the amounts of abilities: a number, or one word.
    #[derive(Debug, PartialEq)]
    enum Amount {
        Fixed(i64),
        Word,
    }

    impl<'de> serde::Deserialize<'de> for Amount {
        fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            scalar(d, "an integer or `word`", |s| match s {
                Scalar::Int(v) => Ok(Amount::Fixed(v)),
                Scalar::Big(_) => Err(Refused::Custom("amount is too large")),
                Scalar::Str("word") => Ok(Amount::Word),
                Scalar::Str(_) => Err(Refused::Unknown(&["word"])),
                Scalar::Float(_) => Err(Refused::WrongType),
            })
        }
    }

    fn read(text: &str) -> Result<Amount, String> {
        let node = parse(text).map_err(|e| format!("{e:?}"))?;
        from_node::<Amount>(&node).map_err(|e| e.to_string())
    }

    #[test]
    fn a_scalar_type_reads_its_values_and_refuses_the_rest_in_words() {
        assert_eq!(read("3"), Ok(Amount::Fixed(3)));
        assert_eq!(read("word"), Ok(Amount::Word));
        for wrong in ["wrod", "2.5", "[1]"] {
            let said = read(wrong).err().unwrap_or_default();
            assert!(said.contains("`word`"), "{wrong}: {said}");
        }
        assert_eq!(
            read("10000000000000000000"),
            Err("amount is too large".to_string())
        );
    }
}
