//! YAML reading with a location for every value.
//!
//! A file is parsed once (serde-saphyr) into a tree of [`Node`]s, each carrying its line
//! and column. Entries are then deserialized from that tree one at a time through
//! [`from_node`], so one bad entry does not hide the errors of the others, and every error
//! knows the exact node it is about. Fields typed [`Located<T>`] keep their location for
//! the semantic checks that come after deserialization.

use std::fmt;

use serde::Deserialize;
use serde::de::Error as _;
use serde::de::{
    self, DeserializeSeed, Deserializer, EnumAccess, IntoDeserializer, MapAccess, SeqAccess,
    VariantAccess, Visitor,
};

use crate::rules::nearest;

pub use super::syntax::{Loc, SyntaxError};

impl Loc {
    fn from_saphyr(l: serde_saphyr::Location) -> Loc {
        Loc {
            line: u32::try_from(l.line()).unwrap_or(u32::MAX).max(1),
            column: u32::try_from(l.column()).unwrap_or(u32::MAX).max(1),
        }
    }
}

/// A YAML value with its location.
#[derive(Clone, Debug, PartialEq)]
pub struct Node {
    /// The value.
    pub value: Value,
    /// Where it starts.
    pub loc: Loc,
}

/// A YAML value whose children are located [`Node`]s.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    /// `null`, `~` or nothing.
    Null,
    /// `true` / `false`.
    Bool(bool),
    /// An integer.
    Int(i64),
    /// An integer above `i64::MAX` (up to `u64::MAX`: seeds, hashes).
    Big(u64),
    /// A float.
    Float(f64),
    /// A string.
    Str(String),
    /// A sequence.
    Seq(Vec<Node>),
    /// A mapping, keys in file order.
    Map(Vec<(Node, Node)>),
}

impl Value {
    /// How this kind of value is called in messages.
    #[must_use]
    pub fn describe(&self) -> &'static str {
        match self {
            Value::Null => "nothing (null)",
            Value::Bool(_) => "a boolean",
            Value::Int(_) | Value::Big(_) => "an integer",
            Value::Float(_) => "a number",
            Value::Str(_) => "a string",
            Value::Seq(_) => "a list",
            Value::Map(_) => "a mapping",
        }
    }
}

struct RawValue(Value);

impl<'de> Deserialize<'de> for RawValue {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(RawVisitor).map(RawValue)
    }
}

struct RawNode(Node);

impl<'de> Deserialize<'de> for RawNode {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let spanned = serde_saphyr::Spanned::<RawValue>::deserialize(d)?;
        Ok(RawNode(Node {
            value: spanned.value.0,
            loc: Loc::from_saphyr(spanned.referenced),
        }))
    }
}

struct RawVisitor;

impl<'de> Visitor<'de> for RawVisitor {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any YAML value")
    }

    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_any(RawVisitor)
    }

    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }

    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::Int(v))
    }

    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(i64::try_from(v).map_or(Value::Big(v), Value::Int))
    }

    fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
        Ok(Value::Float(v))
    }

    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::Str(v.to_string()))
    }

    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::Str(v))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::new();
        while let Some(RawNode(node)) = seq.next_element()? {
            items.push(node);
        }
        Ok(Value::Seq(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut entries = Vec::new();
        while let Some((RawNode(k), RawNode(v))) = map.next_entry()? {
            entries.push((k, v));
        }
        Ok(Value::Map(entries))
    }
}

/// Parse YAML text into a located tree. An empty document is [`Value::Null`].
pub fn parse(text: &str) -> Result<Node, SyntaxError> {
    parse_metered(text, FILE_WORK).result
}

/// The most parse work one file may take (the YAML reader's own default).
pub const FILE_WORK: u64 = 1_000_000;

/// A parse and what it cost.
#[derive(Debug)]
pub struct Metered {
    /// The tree, or why there is none.
    pub result: Result<Node, SyntaxError>,
    /// The work done: the reader's events (every value, list and mapping start and end,
    /// each value an `*alias` repeats counted again) plus the event copies it kept for
    /// `&anchor`s.
    pub work: u64,
    /// Whether the parse stopped because it reached `allowance`.
    pub over: bool,
}

/// Parse as [`parse`] does, with at most `allowance` of work (see [`Metered::work`];
/// events and kept copies are each held to `allowance`, so a parse costs at most twice
/// it), and say what it cost. The reader stops as soon as it runs out, so an `*alias`
/// bomb costs what it is allowed and no more.
pub fn parse_metered(text: &str, allowance: u64) -> Metered {
    if text.trim().is_empty() {
        return Metered {
            result: Ok(Node {
                value: Value::Null,
                loc: Loc { line: 1, column: 1 },
            }),
            work: 0,
            over: false,
        };
    }
    let limit = usize::try_from(allowance.min(FILE_WORK)).unwrap_or(usize::MAX);
    let report: std::rc::Rc<std::cell::RefCell<Option<serde_saphyr::budget::BudgetReport>>> =
        std::rc::Rc::default();
    let sink = std::rc::Rc::clone(&report);
    let mut options = serde_saphyr::Options::default().with_budget_report(move |r| {
        *sink.borrow_mut() = Some(r);
    });
    let mut budget = serde_saphyr::Budget::default();
    budget.max_events = limit;
    budget.max_recorded_anchor_events = limit;
    options.budget = Some(budget);
    let result = serde_saphyr::from_str_with_options::<RawNode>(text, options)
        .map(|n| n.0)
        .map_err(|e| {
            let loc = e
                .location()
                .map(Loc::from_saphyr)
                .unwrap_or(Loc { line: 1, column: 1 });
            let inner = e.without_snippet().to_string();
            // The message ends with " at line L, column C"; the location is reported apart.
            let message = inner
                .rsplit_once(" at line ")
                .map_or(inner.as_str(), |(m, _)| m)
                .to_string();
            super::syntax::explain(text, SyntaxError { message, loc })
        });
    let report = report.borrow_mut().take();
    let (work, over) = report.map_or((0, false), |r| {
        let over = matches!(
            r.breached,
            Some(
                serde_saphyr::budget::BudgetBreach::Events { .. }
                    | serde_saphyr::budget::BudgetBreach::RecordedAnchorEvents { .. }
            )
        );
        let work = r.events.saturating_add(r.recorded_anchor_events);
        (u64::try_from(work).unwrap_or(u64::MAX), over)
    });
    Metered { result, work, over }
}

/// A deserialization error about one node.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeError {
    /// What is wrong.
    pub message: String,
    /// The node it is about (the innermost one that knew).
    pub loc: Option<Loc>,
}

impl DeError {
    fn at(mut self, loc: Loc) -> DeError {
        self.loc.get_or_insert(loc);
        self
    }
}

impl fmt::Display for DeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for DeError {}

fn one_of(expected: &[&str]) -> String {
    match expected {
        [] => "nothing is expected here".to_string(),
        [one] => format!("expected `{one}`"),
        many => format!(
            "expected one of {}",
            many.iter()
                .map(|e| format!("`{e}`"))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

fn did_you_mean(name: &str, expected: &[&'static str]) -> String {
    nearest(name, expected.iter().copied())
        .map(|n| format!(" (did you mean `{n}`?)"))
        .unwrap_or_default()
}

impl de::Error for DeError {
    fn custom<T: fmt::Display>(msg: T) -> Self {
        DeError {
            message: msg.to_string(),
            loc: None,
        }
    }

    fn unknown_field(field: &str, expected: &'static [&'static str]) -> Self {
        // An ability (it has `effect`, no `area`) is given the area of the cards using it.
        if field == "area" && expected.contains(&"effect") && !expected.contains(&"area") {
            return Self::custom(
                "unknown field `area`: an ability has no area; areas belong on the card: give `area:` to each card that uses this ability",
            );
        }
        Self::custom(format!(
            "unknown field `{field}`{}; {}",
            did_you_mean(field, expected),
            one_of(expected)
        ))
    }

    fn unknown_variant(variant: &str, expected: &'static [&'static str]) -> Self {
        Self::custom(format!(
            "unknown value `{variant}`{}; {}",
            did_you_mean(variant, expected),
            one_of(expected)
        ))
    }

    fn missing_field(field: &'static str) -> Self {
        Self::custom(format!("missing field `{field}`"))
    }

    fn invalid_type(unexp: de::Unexpected<'_>, exp: &dyn de::Expected) -> Self {
        Self::custom(mismatch(unexp, exp))
    }

    fn invalid_value(unexp: de::Unexpected<'_>, exp: &dyn de::Expected) -> Self {
        Self::custom(mismatch(unexp, exp))
    }

    fn invalid_length(len: usize, exp: &dyn de::Expected) -> Self {
        Self::custom(format!("expected {}, found {len} items", expected(exp)))
    }
}

/// "expected …, found …", or for a whole number out of the field's range, the range.
fn mismatch(unexp: de::Unexpected<'_>, exp: &dyn de::Expected) -> String {
    let range = integer_range(&exp.to_string());
    match (unexp, range) {
        (de::Unexpected::Signed(_) | de::Unexpected::Unsigned(_), Some((lo, hi))) => {
            format!(
                "{} is out of range: this number must be from {lo} to {hi}",
                unexpected(unexp)
            )
        }
        (de::Unexpected::Float(f), Some((lo, hi))) if f.fract() == 0.0 && f.abs() >= 9.2e18 => {
            format!("this whole number is out of range: it must be from {lo} to {hi}")
        }
        _ => format!("expected {}, found {}", expected(exp), unexpected(unexp)),
    }
}

/// The smallest and largest value of a Rust integer type, by its name.
fn integer_range(name: &str) -> Option<(i128, i128)> {
    Some(match name {
        "i8" => (i8::MIN.into(), i8::MAX.into()),
        "i16" => (i16::MIN.into(), i16::MAX.into()),
        "i32" => (i32::MIN.into(), i32::MAX.into()),
        "i64" | "isize" => (i64::MIN.into(), i64::MAX.into()),
        "u8" => (0, u8::MAX.into()),
        "u16" => (0, u16::MAX.into()),
        "u32" => (0, u32::MAX.into()),
        "u64" | "usize" => (0, u64::MAX.into()),
        _ => return None,
    })
}

/// What was expected, in the words of the content docs rather than Rust's.
fn expected(exp: &dyn de::Expected) -> String {
    let text = exp.to_string();
    match text.as_str() {
        "i8" | "i16" | "i32" | "i64" | "i128" | "isize" => "an integer".to_string(),
        "u8" | "u16" | "u32" | "u64" | "u128" | "usize" => "a whole number (0 or more)".to_string(),
        "f32" | "f64" => "a number".to_string(),
        "a sequence" => "a list".to_string(),
        "a map" => "a mapping".to_string(),
        "an array of length 2" => "a pair like [1, 0]".to_string(),
        _ if text.starts_with("struct ") => "a mapping".to_string(),
        _ if text.starts_with("an array of length ") => {
            format!(
                "a list of {} items",
                text.trim_start_matches("an array of length ")
            )
        }
        _ => text,
    }
}

fn unexpected(u: de::Unexpected<'_>) -> String {
    match u {
        de::Unexpected::Str(s) => format!("the string '{s}'"),
        de::Unexpected::Signed(i) => format!("the integer {i}"),
        de::Unexpected::Unsigned(i) => format!("the integer {i}"),
        de::Unexpected::Float(f) => format!("the number {f}"),
        de::Unexpected::Bool(b) => format!("the boolean {b}"),
        de::Unexpected::Unit | de::Unexpected::Option => "nothing (null)".to_string(),
        de::Unexpected::Seq => "a list".to_string(),
        de::Unexpected::Map => "a mapping".to_string(),
        other => other.to_string(),
    }
}

/// Deserialize a `T` from a located node.
pub fn from_node<'a, T: Deserialize<'a>>(node: &'a Node) -> Result<T, DeError> {
    T::deserialize(NodeDe(node)).map_err(|e| e.at(node.loc))
}

struct NodeDe<'a>(&'a Node);

const LOCATED: &str = "$tokensmith::Located";
const LOCATED_FIELDS: &[&str] = &["$line", "$column", "$value"];

impl<'de> Deserializer<'de> for NodeDe<'de> {
    type Error = DeError;

    fn deserialize_any<V: Visitor<'de>>(self, v: V) -> Result<V::Value, DeError> {
        let node = self.0;
        let result = match &node.value {
            Value::Null => v.visit_unit(),
            Value::Bool(b) => v.visit_bool(*b),
            Value::Int(i) => v.visit_i64(*i),
            Value::Big(u) => v.visit_u64(*u),
            Value::Float(f) => v.visit_f64(*f),
            Value::Str(s) => v.visit_borrowed_str(s),
            Value::Seq(items) => {
                let mut seq = Seq(items.iter());
                v.visit_seq(&mut seq).and_then(|value| {
                    let rest = seq.0.len();
                    if rest == 0 {
                        Ok(value)
                    } else {
                        Err(DeError::custom(format!(
                            "this list has {} items, {rest} more than expected",
                            items.len()
                        )))
                    }
                })
            }
            Value::Map(entries) => v.visit_map(Map {
                entries: entries.iter(),
                value: None,
            }),
        };
        result.map_err(|e| e.at(node.loc))
    }

    fn deserialize_option<V: Visitor<'de>>(self, v: V) -> Result<V::Value, DeError> {
        match self.0.value {
            Value::Null => v.visit_none(),
            _ => v.visit_some(self),
        }
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        fields: &'static [&'static str],
        v: V,
    ) -> Result<V::Value, DeError> {
        if name == LOCATED {
            let loc = self.0.loc;
            return v
                .visit_map(LocatedAccess {
                    node: self.0,
                    step: 0,
                })
                .map_err(|e| e.at(loc));
        }
        if !matches!(self.0.value, Value::Map(_)) {
            let keys: Vec<String> = fields.iter().map(|f| format!("`{f}`")).collect();
            return Err(DeError::custom(format!(
                "expected a mapping (keys: {}), found {}",
                keys.join(", "),
                self.0.value.describe()
            ))
            .at(self.0.loc));
        }
        self.deserialize_any(v)
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _name: &'static str,
        variants: &'static [&'static str],
        v: V,
    ) -> Result<V::Value, DeError> {
        let node = self.0;
        let result = match &node.value {
            Value::Str(s) => v.visit_enum(s.as_str().into_deserializer()),
            Value::Map(entries) if entries.len() == 1 => v.visit_enum(Enum(&entries[0])),
            other => Err(DeError::custom(format!(
                "{}, found {}",
                one_of(variants),
                other.describe()
            ))),
        };
        result.map_err(|e| e.at(node.loc))
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf
        unit unit_struct newtype_struct seq tuple tuple_struct map identifier ignored_any
    }
}

struct Seq<'a>(std::slice::Iter<'a, Node>);

impl<'de> SeqAccess<'de> for Seq<'de> {
    type Error = DeError;

    fn next_element_seed<T: DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, DeError> {
        match self.0.next() {
            Some(node) => seed
                .deserialize(NodeDe(node))
                .map(Some)
                .map_err(|e| e.at(node.loc)),
            None => Ok(None),
        }
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.0.len())
    }
}

struct Map<'a> {
    entries: std::slice::Iter<'a, (Node, Node)>,
    value: Option<&'a Node>,
}

impl<'de> MapAccess<'de> for Map<'de> {
    type Error = DeError;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, DeError> {
        match self.entries.next() {
            Some((k, v)) => {
                self.value = Some(v);
                seed.deserialize(NodeDe(k))
                    .map(Some)
                    .map_err(|e| e.at(k.loc))
            }
            None => Ok(None),
        }
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, DeError> {
        match self.value.take() {
            Some(node) => seed.deserialize(NodeDe(node)).map_err(|e| e.at(node.loc)),
            None => Err(DeError::custom("a mapping value was read before its key")),
        }
    }
}

struct Enum<'a>(&'a (Node, Node));

impl<'de> EnumAccess<'de> for Enum<'de> {
    type Error = DeError;
    type Variant = NodeDe<'de>;

    fn variant_seed<V: DeserializeSeed<'de>>(
        self,
        seed: V,
    ) -> Result<(V::Value, NodeDe<'de>), DeError> {
        let (k, v) = self.0;
        let tag = seed.deserialize(NodeDe(k)).map_err(|e| e.at(k.loc))?;
        Ok((tag, NodeDe(v)))
    }
}

impl<'de> VariantAccess<'de> for NodeDe<'de> {
    type Error = DeError;

    fn unit_variant(self) -> Result<(), DeError> {
        match self.0.value {
            Value::Null => Ok(()),
            _ => Err(DeError::custom("this value takes no parameters").at(self.0.loc)),
        }
    }

    fn newtype_variant_seed<T: DeserializeSeed<'de>>(self, seed: T) -> Result<T::Value, DeError> {
        seed.deserialize(self)
    }

    fn tuple_variant<V: Visitor<'de>>(self, _len: usize, v: V) -> Result<V::Value, DeError> {
        self.deserialize_any(v)
    }

    fn struct_variant<V: Visitor<'de>>(
        self,
        _fields: &'static [&'static str],
        v: V,
    ) -> Result<V::Value, DeError> {
        self.deserialize_any(v)
    }
}

struct LocatedAccess<'a> {
    node: &'a Node,
    step: usize,
}

impl<'de> MapAccess<'de> for LocatedAccess<'de> {
    type Error = DeError;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, DeError> {
        match LOCATED_FIELDS.get(self.step) {
            Some(key) => seed.deserialize((*key).into_deserializer()).map(Some),
            None => Ok(None),
        }
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, DeError> {
        let step = self.step;
        self.step += 1;
        match step {
            0 => seed.deserialize(self.node.loc.line.into_deserializer()),
            1 => seed.deserialize(self.node.loc.column.into_deserializer()),
            _ => seed.deserialize(NodeDe(self.node)),
        }
    }
}

/// A value and where it was written. Deserializes like `T` and remembers its location.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Located<T> {
    /// The value.
    pub value: T,
    /// Where it was written.
    pub loc: Loc,
}

impl<T> Located<T> {
    /// A value with a location.
    pub fn new(value: T, loc: Loc) -> Located<T> {
        Located { value, loc }
    }
}

impl<T> std::ops::Deref for Located<T> {
    type Target = T;

    fn deref(&self) -> &T {
        &self.value
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Located<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct LocatedVisitor<T>(std::marker::PhantomData<T>);

        impl<'de, T: Deserialize<'de>> Visitor<'de> for LocatedVisitor<T> {
            type Value = Located<T>;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a located value")
            }

            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Located<T>, A::Error> {
                let mut line = 0u32;
                let mut column = 0u32;
                let mut value = None;
                while let Some(key) = map.next_key::<String>()? {
                    match key.as_str() {
                        "$line" => line = map.next_value()?,
                        "$column" => column = map.next_value()?,
                        _ => value = Some(map.next_value()?),
                    }
                }
                let value = value.ok_or_else(|| de::Error::custom("located value missing"))?;
                Ok(Located {
                    value,
                    loc: Loc { line, column },
                })
            }
        }

        d.deserialize_struct(
            LOCATED,
            LOCATED_FIELDS,
            LocatedVisitor(std::marker::PhantomData),
        )
    }
}

impl<T: schemars::JsonSchema> schemars::JsonSchema for Located<T> {
    fn inline_schema() -> bool {
        T::inline_schema()
    }

    fn schema_name() -> std::borrow::Cow<'static, str> {
        T::schema_name()
    }

    fn schema_id() -> std::borrow::Cow<'static, str> {
        T::schema_id()
    }

    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        T::json_schema(generator)
    }
}
