//! Lua 5.4's pattern functions (`string.find`, `match`, `gmatch`, `gsub`), as `lstrlib.c`
//! implements them, with a meter: every step of the matcher (each attempt, each character
//! a repetition or a balance walks, each character of a class scanned, each byte compared
//! or copied) is counted, and every [`CHUNK`] steps the count is charged to the move's
//! budget, which reads the clock. A search stops with the budget's message however its
//! pattern and text are shaped; none runs as one uncounted C call.
//!
//! `gmatch`'s iterator keeps its position in Lua upvalues (a small Lua closure calls
//! [`gmatch_step`]), where the host's capture and restore of a script's state see it.
//!
//! Unit tests compare it with Lua's C functions.

use std::rc::Rc;

use mlua::{Function, Lua, MultiValue, Table, Value};

/// Lua's `MAXCCALLS` for patterns: how deep the matcher may recurse.
const MAX_DEPTH: usize = 200;
/// Lua's `LUA_MAXCAPTURES`.
const MAX_CAPTURES: usize = 32;
const ESC: u8 = b'%';
/// Characters that make a pattern more than a plain string (`lstrlib.c`'s `SPECIALS`).
const SPECIALS: &[u8] = b"^$*+?.([%-";

/// Matcher steps per instruction of the budget: a step (one comparison, one byte) costs a
/// few nanoseconds at most, a Lua instruction about as much or more.
pub(super) const STEPS_PER_INSTRUCTION: u64 = 4;
/// Steps a `gsub` replacement function call or table lookup counts (the call itself,
/// besides the Lua it runs).
const CALL_STEPS: u64 = 256;
/// Steps counted between two charges to the budget.
const CHUNK: u64 = 4096;

/// Why a call stopped.
pub(super) enum Stop {
    /// The error Lua's own function raises (message without a place).
    Lua(String),
    /// The budget ran out.
    Budget(String),
    /// An error from Lua code the call ran (a `gsub` replacement function).
    Inner(mlua::Error),
}

type Charge<'a> = &'a dyn Fn(f64) -> Result<(), String>;

/// The step counter of one call.
pub(super) struct Meter<'a> {
    steps: u64,
    charge: Charge<'a>,
}

impl<'a> Meter<'a> {
    pub fn new(charge: Charge<'a>) -> Meter<'a> {
        Meter { steps: 0, charge }
    }

    #[inline]
    fn tick(&mut self, n: u64) -> Result<(), Stop> {
        self.steps = self.steps.saturating_add(n);
        if self.steps >= CHUNK {
            self.flush()?;
        }
        Ok(())
    }

    /// Charge what was counted and not charged yet (rounded up: every call costs at least
    /// one instruction).
    fn flush(&mut self) -> Result<(), Stop> {
        let units = self.steps.div_ceil(STEPS_PER_INSTRUCTION);
        self.steps = 0;
        #[allow(clippy::cast_precision_loss)]
        (self.charge)(units as f64).map_err(Stop::Budget)
    }
}

#[derive(Clone, Copy, Debug)]
enum Len {
    Unfinished,
    Position,
    Bytes(usize),
}

#[derive(Clone, Copy, Debug)]
struct Capture {
    init: usize,
    len: Len,
}

/// One capture's value.
#[derive(Clone, Copy, Debug)]
enum Cap {
    /// Bytes `start..end` of the subject.
    Text(usize, usize),
    /// A position capture (1-based).
    Position(usize),
}

/// `lstrlib.c`'s `MatchState`, over byte indices. Reading one past the end of the subject
/// or the pattern gives 0, as C's terminating NUL does.
struct State<'s, 'm, 'c> {
    src: &'s [u8],
    pat: &'s [u8],
    level: usize,
    depth: usize,
    capture: [Capture; MAX_CAPTURES],
    meter: &'m mut Meter<'c>,
}

fn err<T>(message: &str) -> Result<T, Stop> {
    Err(Stop::Lua(message.to_string()))
}

/// `match_class`: `cl` is the class letter after `%` (C locale).
fn match_class(c: u8, cl: u8) -> bool {
    let res = match cl.to_ascii_lowercase() {
        b'a' => c.is_ascii_alphabetic(),
        b'c' => c.is_ascii_control(),
        b'd' => c.is_ascii_digit(),
        b'g' => c.is_ascii_graphic(),
        b'l' => c.is_ascii_lowercase(),
        b'p' => c.is_ascii_punctuation(),
        b's' => c == b' ' || (9..=13).contains(&c),
        b'u' => c.is_ascii_uppercase(),
        b'w' => c.is_ascii_alphanumeric(),
        b'x' => c.is_ascii_hexdigit(),
        // Deprecated in Lua 5.2, still there in 5.4.
        b'z' => c == 0,
        _ => return cl == c,
    };
    if cl.is_ascii_uppercase() { !res } else { res }
}

impl State<'_, '_, '_> {
    #[inline]
    fn p(&self, i: usize) -> u8 {
        self.pat.get(i).copied().unwrap_or(0)
    }

    #[inline]
    fn s(&self, i: usize) -> u8 {
        self.src.get(i).copied().unwrap_or(0)
    }

    fn reset(&mut self) {
        self.level = 0;
        self.depth = MAX_DEPTH;
    }

    /// `classEnd`: the index after the single-character class starting at `p`.
    fn class_end(&mut self, mut p: usize) -> Result<usize, Stop> {
        let c = self.p(p);
        p += 1;
        if c == ESC {
            if p >= self.pat.len() {
                return err("malformed pattern (ends with '%')");
            }
            return Ok(p + 1);
        }
        if c == b'[' {
            let start = p;
            if self.p(p) == b'^' {
                p += 1;
            }
            loop {
                if p >= self.pat.len() {
                    return err("malformed pattern (missing ']')");
                }
                let cc = self.pat[p];
                p += 1;
                if cc == ESC && p < self.pat.len() {
                    p += 1;
                }
                if self.p(p) == b']' {
                    break;
                }
            }
            self.meter.tick((p - start) as u64)?;
            return Ok(p + 1);
        }
        Ok(p)
    }

    /// `matchbracketclass`: `p` at the `[`, `ec` at the closing `]`.
    fn bracket(&mut self, c: u8, mut p: usize, ec: usize) -> Result<bool, Stop> {
        self.meter.tick(ec.saturating_sub(p) as u64)?;
        let mut sig = true;
        if self.p(p + 1) == b'^' {
            sig = false;
            p += 1;
        }
        loop {
            p += 1;
            if p >= ec {
                break;
            }
            let pc = self.p(p);
            if pc == ESC {
                p += 1;
                if match_class(c, self.p(p)) {
                    return Ok(sig);
                }
            } else if self.p(p + 1) == b'-' && p + 2 < ec {
                p += 2;
                if pc <= c && c <= self.p(p) {
                    return Ok(sig);
                }
            } else if pc == c {
                return Ok(sig);
            }
        }
        Ok(!sig)
    }

    /// `singlematch`.
    fn single(&mut self, s: usize, p: usize, ep: usize) -> Result<bool, Stop> {
        if s >= self.src.len() {
            return Ok(false);
        }
        self.meter.tick(1)?;
        let c = self.src[s];
        Ok(match self.p(p) {
            b'.' => true,
            ESC => match_class(c, self.p(p + 1)),
            b'[' => self.bracket(c, p, ep - 1)?,
            pc => pc == c,
        })
    }

    /// `matchbalance`.
    fn balance(&mut self, s: usize, p: usize) -> Result<Option<usize>, Stop> {
        if p + 1 >= self.pat.len() {
            return err("malformed pattern (missing arguments to '%b')");
        }
        if self.s(s) != self.pat[p] {
            return Ok(None);
        }
        let (open, close) = (self.pat[p], self.pat[p + 1]);
        let mut depth = 1usize;
        let mut s = s + 1;
        while s < self.src.len() {
            self.meter.tick(1)?;
            let c = self.src[s];
            if c == close {
                depth -= 1;
                if depth == 0 {
                    return Ok(Some(s + 1));
                }
            } else if c == open {
                depth += 1;
            }
            s += 1;
        }
        Ok(None)
    }

    fn max_expand(&mut self, s: usize, p: usize, ep: usize) -> Result<Option<usize>, Stop> {
        let mut i = 0;
        while self.single(s + i, p, ep)? {
            i += 1;
        }
        loop {
            if let Some(r) = self.do_match(s + i, ep + 1)? {
                return Ok(Some(r));
            }
            if i == 0 {
                return Ok(None);
            }
            i -= 1;
        }
    }

    fn min_expand(&mut self, mut s: usize, p: usize, ep: usize) -> Result<Option<usize>, Stop> {
        loop {
            if let Some(r) = self.do_match(s, ep + 1)? {
                return Ok(Some(r));
            }
            if self.single(s, p, ep)? {
                s += 1;
            } else {
                return Ok(None);
            }
        }
    }

    fn start_capture(&mut self, s: usize, p: usize, what: Len) -> Result<Option<usize>, Stop> {
        let level = self.level;
        if level >= MAX_CAPTURES {
            return err("too many captures");
        }
        self.capture[level] = Capture { init: s, len: what };
        self.level = level + 1;
        let r = self.do_match(s, p)?;
        if r.is_none() {
            self.level -= 1;
        }
        Ok(r)
    }

    fn end_capture(&mut self, s: usize, p: usize) -> Result<Option<usize>, Stop> {
        let Some(l) = (0..self.level)
            .rev()
            .find(|&l| matches!(self.capture[l].len, Len::Unfinished))
        else {
            return err("invalid pattern capture");
        };
        self.capture[l].len = Len::Bytes(s - self.capture[l].init);
        let r = self.do_match(s, p)?;
        if r.is_none() {
            self.capture[l].len = Len::Unfinished;
        }
        Ok(r)
    }

    /// `check_capture`: `c` is the digit after `%`.
    fn check_capture(&self, c: u8) -> Result<usize, Stop> {
        let l = i32::from(c) - i32::from(b'1');
        match usize::try_from(l) {
            Ok(i) if i < self.level && !matches!(self.capture[i].len, Len::Unfinished) => Ok(i),
            _ => Err(Stop::Lua(format!("invalid capture index %{}", l + 1))),
        }
    }

    fn match_capture(&mut self, s: usize, c: u8) -> Result<Option<usize>, Stop> {
        let l = self.check_capture(c)?;
        let Capture { init, len } = self.capture[l];
        let Len::Bytes(len) = len else {
            return Ok(None);
        };
        self.meter.tick(len as u64 + 1)?;
        if self.src.len() - s >= len && self.src[init..init + len] == self.src[s..s + len] {
            Ok(Some(s + len))
        } else {
            Ok(None)
        }
    }

    /// `match`: the end of a match of `pat[p..]` at `s`, if there is one.
    fn do_match(&mut self, s: usize, p: usize) -> Result<Option<usize>, Stop> {
        if self.depth == 0 {
            return err("pattern too complex");
        }
        self.depth -= 1;
        let r = self.match_body(s, p);
        self.depth += 1;
        r
    }

    fn match_body(&mut self, mut s: usize, mut p: usize) -> Result<Option<usize>, Stop> {
        loop {
            self.meter.tick(1)?;
            if p >= self.pat.len() {
                return Ok(Some(s));
            }
            match self.pat[p] {
                b'(' => {
                    return if self.p(p + 1) == b')' {
                        self.start_capture(s, p + 2, Len::Position)
                    } else {
                        self.start_capture(s, p + 1, Len::Unfinished)
                    };
                }
                b')' => return self.end_capture(s, p + 1),
                b'$' if p + 1 == self.pat.len() => {
                    return Ok((s == self.src.len()).then_some(s));
                }
                ESC if self.p(p + 1) == b'b' => match self.balance(s, p + 2)? {
                    Some(e) => {
                        s = e;
                        p += 4;
                    }
                    None => return Ok(None),
                },
                ESC if self.p(p + 1) == b'f' => {
                    p += 2;
                    if self.p(p) != b'[' {
                        return err("missing '[' after '%f' in pattern");
                    }
                    let ep = self.class_end(p)?;
                    let previous = if s == 0 { 0 } else { self.s(s - 1) };
                    let current = self.s(s);
                    if !self.bracket(previous, p, ep - 1)? && self.bracket(current, p, ep - 1)? {
                        p = ep;
                    } else {
                        return Ok(None);
                    }
                }
                ESC if self.p(p + 1).is_ascii_digit() => {
                    match self.match_capture(s, self.p(p + 1))? {
                        Some(e) => {
                            s = e;
                            p += 2;
                        }
                        None => return Ok(None),
                    }
                }
                _ => {
                    let ep = self.class_end(p)?;
                    let suffix = self.p(ep);
                    if !self.single(s, p, ep)? {
                        if matches!(suffix, b'*' | b'?' | b'-') {
                            p = ep + 1;
                            continue;
                        }
                        return Ok(None);
                    }
                    match suffix {
                        b'?' => {
                            if let Some(r) = self.do_match(s + 1, ep + 1)? {
                                return Ok(Some(r));
                            }
                            p = ep + 1;
                        }
                        b'+' => return self.max_expand(s + 1, p, ep),
                        b'*' => return self.max_expand(s, p, ep),
                        b'-' => return self.min_expand(s, p, ep),
                        _ => {
                            s += 1;
                            p = ep;
                        }
                    }
                }
            }
        }
    }

    /// `get_onecapture`: capture `i` of a match `s..e`.
    fn capture(&self, i: usize, s: usize, e: usize) -> Result<Cap, Stop> {
        if i >= self.level {
            if i != 0 {
                return Err(Stop::Lua(format!("invalid capture index %{}", i + 1)));
            }
            return Ok(Cap::Text(s, e));
        }
        let c = self.capture[i];
        match c.len {
            Len::Unfinished => err("unfinished capture"),
            Len::Position => Ok(Cap::Position(c.init + 1)),
            Len::Bytes(l) => Ok(Cap::Text(c.init, c.init + l)),
        }
    }

    /// `push_captures`: every capture of a match `s..e` (the whole match when the
    /// pattern has none and `s` is given).
    fn captures(&mut self, lua: &Lua, whole: Option<(usize, usize)>) -> Result<Vec<Value>, Stop> {
        let n = if self.level == 0 && whole.is_some() {
            1
        } else {
            self.level
        };
        let (s, e) = whole.unwrap_or((0, 0));
        let mut out = Vec::with_capacity(n);
        for i in 0..n {
            out.push(self.capture_value(lua, i, s, e)?);
        }
        Ok(out)
    }

    fn capture_value(&mut self, lua: &Lua, i: usize, s: usize, e: usize) -> Result<Value, Stop> {
        Ok(match self.capture(i, s, e)? {
            Cap::Position(n) => Value::Integer(to_int(n)),
            Cap::Text(a, b) => {
                self.meter.tick((b - a) as u64 / 8)?;
                Value::String(lua.create_string(&self.src[a..b]).map_err(Stop::Inner)?)
            }
        })
    }
}

fn to_int(n: usize) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

/// `posrelatI`, then minus one: a 0-based start (may be past the end).
fn start_index(pos: i64, len: usize) -> usize {
    let p = if pos > 0 {
        usize::try_from(pos).unwrap_or(usize::MAX)
    } else if pos == 0 || pos.unsigned_abs() > len as u64 {
        1
    } else {
        len - usize::try_from(pos.unsigned_abs()).unwrap_or(len) + 1
    };
    p - 1
}

fn new_state<'s, 'm, 'c>(
    src: &'s [u8],
    pat: &'s [u8],
    meter: &'m mut Meter<'c>,
) -> State<'s, 'm, 'c> {
    State {
        src,
        pat,
        level: 0,
        depth: MAX_DEPTH,
        capture: [Capture {
            init: 0,
            len: Len::Unfinished,
        }; MAX_CAPTURES],
        meter,
    }
}

/// The arguments of a call, as `lauxlib.c` checks them.
struct Args<'a> {
    lua: &'a Lua,
    values: &'a [Value],
    who: &'static str,
    /// The budget, to charge converting long strings to numbers.
    meter: Charge<'a>,
}

impl Args<'_> {
    /// `luaL_argerror`: the function by its name in `string`, and in a method call
    /// (`s:find(p)`) the arguments counted without `self`.
    fn bad(&self, n: usize, what: &str) -> Stop {
        let who = self.who.trim_start_matches("string.");
        if called_as_method(self.lua) {
            if n == 1 {
                return Stop::Lua(format!("calling '{who}' on bad self ({what})"));
            }
            return Stop::Lua(format!("bad argument #{} to '{who}' ({what})", n - 1));
        }
        Stop::Lua(format!("bad argument #{n} to '{who}' ({what})"))
    }

    fn type_name(&self, n: usize) -> String {
        match self.values.get(n - 1) {
            None => "no value".to_string(),
            Some(Value::Table(t)) => match t
                .metatable()
                .and_then(|m| m.raw_get::<Value>("__name").ok())
            {
                Some(Value::String(s)) => s.to_string_lossy(),
                _ => "table".to_string(),
            },
            Some(v) => v.type_name().to_string(),
        }
    }

    /// `luaL_checklstring` (numbers become their text, NaN and infinities the same
    /// everywhere).
    fn string(&self, n: usize) -> Result<mlua::LuaString, Stop> {
        match self.values.get(n - 1) {
            Some(Value::String(s)) => Ok(s.clone()),
            Some(v @ (Value::Integer(_) | Value::Number(_))) => number_text(self.lua, v),
            _ => Err(self.bad(n, &format!("string expected, got {}", self.type_name(n)))),
        }
    }

    /// `luaL_optinteger`.
    fn opt_integer(&self, n: usize, default: i64) -> Result<i64, Stop> {
        match self.values.get(n - 1) {
            None | Some(Value::Nil) => Ok(default),
            Some(Value::Integer(i)) => Ok(*i),
            Some(v @ (Value::Number(_) | Value::String(_))) => {
                if let Value::String(s) = v {
                    // Converting walks the text.
                    #[allow(clippy::cast_precision_loss)]
                    (self.meter)(s.as_bytes().len() as f64 / 8.0).map_err(Stop::Budget)?;
                }
                if let Some(i) = self.lua.coerce_integer(v.clone()).map_err(Stop::Inner)? {
                    return Ok(i);
                }
                if self
                    .lua
                    .coerce_number(v.clone())
                    .map_err(Stop::Inner)?
                    .is_some()
                {
                    Err(self.bad(n, "number has no integer representation"))
                } else {
                    Err(self.bad(n, &format!("number expected, got {}", self.type_name(n))))
                }
            }
            Some(_) => Err(self.bad(n, &format!("number expected, got {}", self.type_name(n)))),
        }
    }
}

/// A number's text as scripts see it: Lua's, but NaN and infinities the same on every
/// platform.
fn number_text(lua: &Lua, v: &Value) -> Result<mlua::LuaString, Stop> {
    if let Value::Number(f) = v {
        let special = if f.is_nan() {
            Some("nan")
        } else if *f == f64::INFINITY {
            Some("inf")
        } else if *f == f64::NEG_INFINITY {
            Some("-inf")
        } else {
            None
        };
        if let Some(text) = special {
            return lua.create_string(text).map_err(Stop::Inner);
        }
    }
    match lua.coerce_string(v.clone()).map_err(Stop::Inner)? {
        Some(s) => Ok(s),
        None => Err(Stop::Lua("number expected".to_string())),
    }
}

/// `string.find` (`find`) and `string.match`: `str_find_aux`.
pub(super) fn find_aux(
    lua: &Lua,
    args: &[Value],
    find: bool,
    charge: Charge,
) -> Result<MultiValue, Stop> {
    let a = Args {
        lua,
        values: args,
        who: if find { "string.find" } else { "string.match" },
        meter: charge,
    };
    let s = a.string(1)?;
    let p = a.string(2)?;
    let init_arg = a.opt_integer(3, 1)?;
    let (s, p) = (s.as_bytes(), p.as_bytes());
    let (src, pat): (&[u8], &[u8]) = (&s, &p);
    let mut meter = Meter::new(charge);
    let init = start_index(init_arg, src.len());
    let nil = || Ok(MultiValue::from_vec(vec![Value::Nil]));
    if init > src.len() {
        meter.flush()?;
        return nil();
    }
    let plain = find
        && args
            .get(3)
            .is_some_and(|v| !matches!(v, Value::Nil | Value::Boolean(false)));
    meter.tick(pat.len() as u64 / 8)?;
    if find && (plain || !pat.iter().any(|c| SPECIALS.contains(c))) {
        // A linear-time search: its work is at most the text and the needle once.
        meter.tick((src.len() - init + pat.len()) as u64 / 4)?;
        meter.flush()?;
        return match memchr::memmem::find(&src[init..], pat) {
            Some(at) => Ok(MultiValue::from_vec(vec![
                Value::Integer(to_int(init + at + 1)),
                Value::Integer(to_int(init + at + pat.len())),
            ])),
            None => nil(),
        };
    }
    let anchor = pat.first() == Some(&b'^');
    let pat = if anchor { &pat[1..] } else { pat };
    let mut ms = new_state(src, pat, &mut meter);
    let mut s1 = init;
    loop {
        ms.reset();
        if let Some(e) = ms.do_match(s1, 0)? {
            let out = if find {
                let mut v = vec![Value::Integer(to_int(s1 + 1)), Value::Integer(to_int(e))];
                v.extend(ms.captures(lua, None)?);
                v
            } else {
                ms.captures(lua, Some((s1, e)))?
            };
            ms.meter.flush()?;
            return Ok(MultiValue::from_vec(out));
        }
        s1 += 1;
        if s1 > src.len() || anchor {
            break;
        }
    }
    meter.flush()?;
    nil()
}

/// `gmatch`'s arguments, checked: the subject, the pattern, the 0-based start.
pub(super) fn gmatch_start(lua: &Lua, args: &[Value], charge: Charge) -> Result<MultiValue, Stop> {
    let a = Args {
        lua,
        values: args,
        who: "string.gmatch",
        meter: charge,
    };
    let s = a.string(1)?;
    let p = a.string(2)?;
    let len = s.as_bytes().len();
    let init = start_index(a.opt_integer(3, 1)?, len).min(len + 1);
    Ok(MultiValue::from_vec(vec![
        Value::String(s),
        Value::String(p),
        Value::Integer(to_int(init)),
    ]))
}

/// One step of a `gmatch` iterator (`gmatch_aux`): from `src` (0-based), skipping an
/// empty match at `last`, the end of the next match and its captures; nothing at the end.
pub(super) fn gmatch_step(
    lua: &Lua,
    (s, p, src, last): (mlua::LuaString, mlua::LuaString, i64, i64),
    charge: Charge,
) -> Result<MultiValue, Stop> {
    let (s, p) = (s.as_bytes(), p.as_bytes());
    let (subject, pat): (&[u8], &[u8]) = (&s, &p);
    let mut meter = Meter::new(charge);
    // The call from the iterator and back.
    meter.tick(CALL_STEPS / 8)?;
    let mut ms = new_state(subject, pat, &mut meter);
    let last = usize::try_from(last).ok();
    let mut at = usize::try_from(src).unwrap_or(usize::MAX);
    while at <= subject.len() {
        ms.reset();
        if let Some(e) = ms.do_match(at, 0)?
            && Some(e) != last
        {
            let mut out = vec![Value::Integer(to_int(e))];
            out.extend(ms.captures(lua, Some((at, e)))?);
            ms.meter.flush()?;
            return Ok(MultiValue::from_vec(out));
        }
        at += 1;
    }
    meter.flush()?;
    Ok(MultiValue::new())
}

/// `string.gsub` (`str_gsub`), its result capped at `largest` bytes.
pub(super) fn gsub(
    lua: &Lua,
    args: &[Value],
    largest: usize,
    charge: Charge,
) -> Result<MultiValue, Stop> {
    let a = Args {
        lua,
        values: args,
        who: "string.gsub",
        meter: charge,
    };
    let subject = a.string(1)?;
    let pattern = a.string(2)?;
    let repl = args.get(2).cloned().unwrap_or(Value::Nil);
    let (s, p) = (subject.as_bytes(), pattern.as_bytes());
    let (src, pat): (&[u8], &[u8]) = (&s, &p);
    let max_n = a.opt_integer(4, to_int(src.len()).saturating_add(1))?;
    let text = match &repl {
        Value::String(_) | Value::Integer(_) | Value::Number(_) => {
            Some(number_text_or_string(lua, &repl)?)
        }
        Value::Function(_) | Value::Table(_) => None,
        _ => {
            return Err(a.bad(
                3,
                &format!("string/function/table expected, got {}", a.type_name(3)),
            ));
        }
    };
    let text_bytes = text.as_ref().map(mlua::LuaString::as_bytes);
    let news: Option<&[u8]> = text_bytes.as_deref();
    let anchor = pat.first() == Some(&b'^');
    let pat = if anchor { &pat[1..] } else { pat };
    let mut meter = Meter::new(charge);
    let mut ms = new_state(src, pat, &mut meter);
    let mut out = Built::new(lua, largest);
    let mut at = 0usize;
    let mut last: Option<usize> = None;
    let mut n: i64 = 0;
    let mut changed = false;
    while n < max_n {
        // Each turn also appends to the result and checks it.
        ms.meter.tick(4)?;
        ms.reset();
        let matched = ms.do_match(at, 0)?;
        if let Some(e) = matched
            && Some(e) != last
        {
            n += 1;
            // add_value
            match (&repl, news) {
                (_, Some(news)) => {
                    changed = true;
                    ms.meter.tick(news.len() as u64 / 8 + 1)?;
                    let mut i = 0;
                    while let Some(off) = memchr::memchr(ESC, &news[i..]) {
                        out.grow(ms.meter, &news[i..i + off])?;
                        let q = i + off + 1;
                        let c = news.get(q).copied().unwrap_or(0);
                        if c == ESC {
                            out.grow(ms.meter, b"%")?;
                        } else if c == b'0' {
                            out.grow(ms.meter, &src[at..e])?;
                        } else if c.is_ascii_digit() {
                            match ms.capture(usize::from(c - b'1'), at, e)? {
                                Cap::Text(x, y) => out.grow(ms.meter, &src[x..y])?,
                                Cap::Position(k) => out.grow(ms.meter, k.to_string().as_bytes())?,
                            }
                        } else {
                            return err("invalid use of '%' in replacement string");
                        }
                        i = q + 1;
                    }
                    out.grow(ms.meter, &news[i..])?;
                }
                (Value::Function(f), None) => {
                    // A call into Lua and back costs about a microsecond of its own.
                    ms.meter.tick(CALL_STEPS)?;
                    let caps = ms.captures(lua, Some((at, e)))?;
                    ms.meter.flush()?;
                    let v: Value = f
                        .call::<MultiValue>(MultiValue::from_vec(caps))
                        .map_err(Stop::Inner)?
                        .into_iter()
                        .next()
                        .unwrap_or(Value::Nil);
                    changed |= replacement(lua, &mut out, ms.meter, &src[at..e], v)?;
                }
                (Value::Table(t), None) => {
                    ms.meter.tick(CALL_STEPS)?;
                    let key = ms.capture_value(lua, 0, at, e)?;
                    ms.meter.flush()?;
                    let v: Value = t.get(key).map_err(Stop::Inner)?;
                    changed |= replacement(lua, &mut out, ms.meter, &src[at..e], v)?;
                }
                _ => {}
            }
            at = e;
            last = Some(e);
        } else if at < src.len() {
            out.grow(ms.meter, &src[at..=at])?;
            at += 1;
        } else {
            break;
        }
        if anchor {
            break;
        }
    }
    let result = if changed {
        out.grow(ms.meter, &src[at..])?;
        ms.meter.flush()?;
        lua.create_string(out.bytes()).map_err(Stop::Inner)?
    } else {
        ms.meter.flush()?;
        subject.clone()
    };
    Ok(MultiValue::from_vec(vec![
        Value::String(result),
        Value::Integer(n),
    ]))
}

fn number_text_or_string(lua: &Lua, v: &Value) -> Result<mlua::LuaString, Stop> {
    match v {
        Value::String(s) => Ok(s.clone()),
        other => number_text(lua, other),
    }
}

/// A result built outside Lua's allocator (`gsub`'s), counted against the pack's script
/// memory as it grows: while it lives, the state's memory limit is lowered by what the
/// buffer holds, so nested calls each keeping a large result cannot pass the cap between
/// them, and Lua's own allocations see the room the buffer took.
struct Built<'l> {
    lua: &'l Lua,
    out: Vec<u8>,
    /// Bytes the state's limit is lowered by now.
    held: usize,
    largest: usize,
}

impl<'l> Built<'l> {
    fn new(lua: &'l Lua, largest: usize) -> Built<'l> {
        Built {
            lua,
            out: Vec::new(),
            held: 0,
            largest,
        }
    }

    fn bytes(&self) -> &[u8] {
        &self.out
    }

    /// Append `bytes`, counted, and refused past `largest` bytes or the memory the state
    /// has left.
    fn grow(&mut self, meter: &mut Meter, bytes: &[u8]) -> Result<(), Stop> {
        meter.tick(bytes.len() as u64 / 8)?;
        let need = self.out.len() + bytes.len();
        if need > self.largest {
            return Err(Stop::Lua(format!(
                "string.gsub: the result would be more than the pack's script memory ({} bytes)",
                self.largest
            )));
        }
        if need > self.out.capacity() {
            let want = need
                .max(self.out.capacity().saturating_mul(2))
                .min(self.largest);
            self.hold(want.saturating_sub(self.held))?;
            self.out.reserve_exact(want - self.out.len());
        }
        self.out.extend_from_slice(bytes);
        Ok(())
    }

    /// Lower the state's limit by `more` bytes, after a full collection if they are not
    /// free: running out here is running out of the pack's script memory.
    fn hold(&mut self, more: usize) -> Result<(), Stop> {
        let lua = self.lua;
        let limit = swap_limit(lua, usize::MAX)?;
        if limit == 0 {
            // No limit is set (a state outside the sandbox): nothing to count against.
            swap_limit(lua, 0)?;
            return Ok(());
        }
        let fits = |lua: &Lua| lua.used_memory().saturating_add(more) <= limit;
        if !fits(lua) {
            swap_limit(lua, limit)?;
            lua.gc_collect().map_err(Stop::Inner)?;
            swap_limit(lua, usize::MAX)?;
            if !fits(lua) {
                swap_limit(lua, limit)?;
                // A memory error (which no `pcall` can keep), told at the calling line.
                let place = super::place::script_place(lua);
                return Err(Stop::Inner(mlua::Error::MemoryError(format!(
                    "{place}string.gsub: not enough memory"
                ))));
            }
        }
        swap_limit(lua, limit - more)?;
        self.held += more;
        Ok(())
    }
}

impl Drop for Built<'_> {
    fn drop(&mut self) {
        if self.held > 0
            && let Ok(limit) = swap_limit(self.lua, usize::MAX)
        {
            let _ = swap_limit(self.lua, limit.saturating_add(self.held));
        }
    }
}

/// Set the state's memory limit, giving the one it had.
fn swap_limit(lua: &Lua, limit: usize) -> Result<usize, Stop> {
    lua.set_memory_limit(limit).map_err(Stop::Inner)
}

/// The end of `add_value`: a function's or table's answer `v` for the match `whole`.
fn replacement(
    lua: &Lua,
    out: &mut Built<'_>,
    meter: &mut Meter,
    whole: &[u8],
    v: Value,
) -> Result<bool, Stop> {
    match v {
        Value::Nil | Value::Boolean(false) => {
            out.grow(meter, whole)?;
            Ok(false)
        }
        Value::String(_) | Value::Integer(_) | Value::Number(_) => {
            let text = number_text_or_string(lua, &v)?;
            out.grow(meter, &text.as_bytes())?;
            Ok(true)
        }
        other => Err(Stop::Lua(format!(
            "invalid replacement value (a {})",
            other.type_name()
        ))),
    }
}

/// Whether the running host function was called as a method (`s:find(p)`), or the
/// sandbox's Lua wrapper around it was (`gmatch`'s).
fn called_as_method(lua: &Lua) -> bool {
    let mut method = lua
        .inspect_stack(0, |d| d.names().name_what == Some("method"))
        .unwrap_or(false);
    for level in 1..8 {
        let Some((sandbox, m)) = lua.inspect_stack(level, |d| {
            (
                d.source().source.as_deref() == Some("=sandbox"),
                d.names().name_what == Some("method"),
            )
        }) else {
            break;
        };
        if !sandbox {
            break;
        }
        method = m;
    }
    method
}

/// The error scripts see for a stop in `who`: at the script line that called it.
fn to_error(lua: &Lua, who: &str, stop: Stop) -> mlua::Error {
    let place = super::place::script_place(lua);
    match stop {
        Stop::Lua(m) => mlua::Error::RuntimeError(format!("{place}{m}")),
        Stop::Budget(o) => mlua::Error::RuntimeError(format!("{place}{who}: {o}")),
        Stop::Inner(e) => e,
    }
}

/// The Lua side of `gmatch`: the iterator's position lives in its upvalues.
const GMATCH: &str = r"
local start, step = ...
return function(...)
  local s, p, src, last
  s, p, src = start(...)
  last = -1
  local function store(e, ...)
    if e then src, last = e, e end
    return ...
  end
  return function()
    return store(step(s, p, src, last))
  end
end
";

/// Replace `string`'s pattern functions with the metered ones, charging `budget`; results
/// of `gsub` are capped at `largest` bytes.
pub(super) fn install(
    lua: &Lua,
    string: &Table,
    charge: &Rc<dyn Fn(f64) -> Result<(), String>>,
    largest: usize,
) -> mlua::Result<()> {
    let b = Rc::clone(charge);
    let find = lua.create_function(move |lua, args: MultiValue| {
        let charge = |c: f64| b(c);
        let args: Vec<Value> = args.into_iter().collect();
        find_aux(lua, &args, true, &charge).map_err(|s| to_error(lua, "string.find", s))
    })?;
    let b = Rc::clone(charge);
    let matcher = lua.create_function(move |lua, args: MultiValue| {
        let charge = |c: f64| b(c);
        let args: Vec<Value> = args.into_iter().collect();
        find_aux(lua, &args, false, &charge).map_err(|s| to_error(lua, "string.match", s))
    })?;
    let b = Rc::clone(charge);
    let gsub_fn = lua.create_function(move |lua, args: MultiValue| {
        let charge = |c: f64| b(c);
        let args: Vec<Value> = args.into_iter().collect();
        gsub(lua, &args, largest, &charge).map_err(|s| to_error(lua, "string.gsub", s))
    })?;
    let b = Rc::clone(charge);
    let start = lua.create_function(move |lua, args: MultiValue| {
        let charge = |c: f64| b(c);
        let args: Vec<Value> = args.into_iter().collect();
        gmatch_start(lua, &args, &charge).map_err(|s| to_error(lua, "string.gmatch", s))
    })?;
    let b = Rc::clone(charge);
    let step = lua.create_function(
        move |lua, args: (mlua::LuaString, mlua::LuaString, i64, i64)| {
            let charge = |c: f64| b(c);
            gmatch_step(lua, args, &charge).map_err(|s| to_error(lua, "string.gmatch", s))
        },
    )?;
    let gmatch: Function = lua.load(GMATCH).set_name("=sandbox").call((start, step))?;
    string.raw_set("find", find)?;
    string.raw_set("match", matcher)?;
    string.raw_set("gsub", gsub_fn)?;
    string.raw_set("gmatch", gmatch)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    //! Differential tests: the metered functions, installed in a sandboxed state, against
    //! Lua's own C functions in a plain state, on generated patterns, texts and starts.

    use std::rc::Rc;

    use mlua::{Function, Lua, MultiValue, Table, Value};

    use super::super::budget::ScriptBudget;
    use super::super::sandbox;
    use crate::rules::MoveLimits;

    /// A small deterministic generator (xorshift64*).
    struct Gen(u64);

    impl Gen {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
        }

        fn below(&mut self, n: usize) -> usize {
            usize::try_from(self.next() % n as u64).unwrap_or(0)
        }

        fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
            items[self.below(items.len())]
        }
    }

    const SUBJECT: &[&str] = &[
        "a", "a", "b", "ab", "(", ")", "[", "]", "%", "^", "$", ".", "-", " ", "1", "x", "\0", "A",
        "\t", "é", "\u{7f}", "_",
    ];

    const ITEMS: &[&str] = &[
        "a", "b", "x", ".", "%a", "%d", "%s", "%w", "%x", "%p", "%c", "%g", "%u", "%l", "%A", "%S",
        "%.", "%%", "[ab]", "[^a]", "[a-c]", "[%d]", "[]]", "[^]a]", "[%a_]", "[a-]", "%b()",
        "%f[%w]", "%f[^a]", "()", "(", ")", "(a)", "(.-)", "%1", "%2", "%0", "^", "$", "*", "+",
        "-", "?", "a*", "a+", "a-", ".?", "[ab]*", "\0", "%z", "é",
    ];

    const BROKEN: &[&str] = &["%", "[", "[a", "%b", "%ba", "%f", "%fa", "[%", "(()", "%9"];

    fn subject(g: &mut Gen) -> String {
        let n = g.below(12);
        (0..n).map(|_| g.pick(SUBJECT)).collect()
    }

    fn pattern(g: &mut Gen) -> String {
        let n = g.below(7);
        let mut p: String = (0..n).map(|_| g.pick(ITEMS)).collect();
        if g.below(20) == 0 {
            p.push_str(g.pick(BROKEN));
        }
        p
    }

    /// An argument as text, created in each state.
    #[derive(Clone, Debug)]
    enum Arg {
        Text(Vec<u8>),
        Int(i64),
        Float(f64),
        Nil,
        Bool(bool),
        Repl(&'static str),
    }

    const FUNCTION_REPL: &str = "return function(...) local a = ... if a == 'a' then return nil elseif a == 'b' then return false elseif a == 'x' then return {} elseif a == '1' then return 7.5 end return '<' .. select('#', ...) .. ':' .. tostring(a) .. '>' end";
    const TABLE_REPL: &str =
        "return { a = 'A', b = false, ['1'] = 1, [1] = 'one', [2] = 2.0, x = {}, ['('] = '%1' }";

    fn value(lua: &Lua, a: &Arg) -> Value {
        match a {
            Arg::Text(t) => Value::String(lua.create_string(t).unwrap_or_else(|e| panic!("{e}"))),
            Arg::Int(i) => Value::Integer(*i),
            Arg::Float(f) => Value::Number(*f),
            Arg::Nil => Value::Nil,
            Arg::Bool(b) => Value::Boolean(*b),
            Arg::Repl(code) => lua
                .load(*code)
                .eval::<Value>()
                .unwrap_or_else(|e| panic!("{e}")),
        }
    }

    fn show(v: &Value) -> String {
        match v {
            Value::Nil => "nil".to_string(),
            Value::Boolean(b) => format!("{b}"),
            Value::Integer(i) => format!("i{i}"),
            Value::Number(f) => format!("f{f}"),
            Value::String(s) => format!("{:?}", s.as_bytes().to_vec()),
            other => other.type_name().to_string(),
        }
    }

    /// The message of an error, without mlua's wrapping. Called from the host, Lua's own
    /// functions find no name at the call and give their global one (`'string.find'`);
    /// called from a script, as ours always are, they give the name at the call.
    fn root(e: &mlua::Error) -> String {
        root_text(e).replace("to 'string.", "to '")
    }

    fn root_text(e: &mlua::Error) -> String {
        match e {
            mlua::Error::CallbackError { cause, .. } => root_text(cause),
            mlua::Error::RuntimeError(m) => {
                let m = m.split("\nstack traceback").next().unwrap_or(m);
                m.to_string()
            }
            other => other.to_string(),
        }
    }

    fn call(lua: &Lua, name: &str, args: &[Arg], gmatch: bool) -> Result<Vec<String>, String> {
        let string: Table = lua
            .globals()
            .get("string")
            .unwrap_or_else(|e| panic!("{e}"));
        let f: Function = string.get(name).unwrap_or_else(|e| panic!("{e}"));
        let values: Vec<Value> = args.iter().map(|a| value(lua, a)).collect();
        let out = f
            .call::<MultiValue>(MultiValue::from_vec(values))
            .map_err(|e| root(&e))?;
        if !gmatch {
            return Ok(out.iter().map(show).collect());
        }
        let Some(Value::Function(iter)) = out.into_iter().next() else {
            return Err("no iterator".to_string());
        };
        let mut seen = Vec::new();
        for _ in 0..40 {
            let r = iter.call::<MultiValue>(()).map_err(|e| root(&e))?;
            if matches!(r.front(), None | Some(Value::Nil)) {
                seen.push("end".to_string());
                break;
            }
            seen.push(r.iter().map(show).collect::<Vec<_>>().join(","));
        }
        Ok(seen)
    }

    fn sandboxed() -> Lua {
        let limits = MoveLimits {
            instructions: u64::MAX,
            wall_ms: u32::MAX,
            ..MoveLimits::DEFAULT
        };
        let budget = Rc::new(ScriptBudget::new(&limits));
        sandbox::new_state(&budget, 256 << 20)
            .unwrap_or_else(|e| panic!("{e}"))
            .0
    }

    fn compare(ours: &Lua, theirs: &Lua, name: &str, args: &[Arg], failures: &mut Vec<String>) {
        let gmatch = name == "gmatch";
        let a = call(ours, name, args, gmatch);
        let b = call(theirs, name, args, gmatch);
        if a != b && failures.len() < 20 {
            failures.push(format!("{name}{args:?}:\n  ours   {a:?}\n  Lua's  {b:?}"));
        }
    }

    fn text(s: &str) -> Arg {
        Arg::Text(s.as_bytes().to_vec())
    }

    #[test]
    fn the_metered_pattern_functions_give_what_lua_gives() {
        let ours = sandboxed();
        let theirs = Lua::new();
        let mut g = Gen(0x9E37_79B9_7F4A_7C15);
        let mut failures = Vec::new();
        for _ in 0..6000 {
            let s = text(&subject(&mut g));
            let p = text(&pattern(&mut g));
            let init = match g.below(4) {
                0 => Arg::Nil,
                1 => Arg::Int(i64::try_from(g.below(31)).unwrap_or(0) - 15),
                2 => Arg::Int(1),
                _ => Arg::Int(i64::try_from(g.below(5)).unwrap_or(0)),
            };
            compare(
                &ours,
                &theirs,
                "find",
                &[s.clone(), p.clone(), init.clone()],
                &mut failures,
            );
            compare(
                &ours,
                &theirs,
                "find",
                &[s.clone(), p.clone(), init.clone(), Arg::Bool(true)],
                &mut failures,
            );
            compare(
                &ours,
                &theirs,
                "match",
                &[s.clone(), p.clone(), init.clone()],
                &mut failures,
            );
            compare(
                &ours,
                &theirs,
                "gmatch",
                &[s.clone(), p.clone(), init],
                &mut failures,
            );
            let repl = match g.below(5) {
                0 => text(g.pick(&["", "x", "%0", "%1", "[%2]", "%%", "x%", "%a", "%1%1"])),
                1 => Arg::Repl(FUNCTION_REPL),
                2 => Arg::Repl(TABLE_REPL),
                3 => Arg::Int(42),
                _ => text("<%0>"),
            };
            let n = if g.below(3) == 0 {
                Arg::Int(i64::try_from(g.below(4)).unwrap_or(0) - 1)
            } else {
                Arg::Nil
            };
            compare(&ours, &theirs, "gsub", &[s, p, repl, n], &mut failures);
        }
        assert!(failures.is_empty(), "{}", failures.join("\n"));
    }

    #[test]
    fn arguments_limits_and_errors_are_lua_s() {
        let ours = sandboxed();
        let theirs = Lua::new();
        let mut failures = Vec::new();
        let deep = "a?".repeat(260);
        let many = "()".repeat(33);
        let cases: Vec<(&str, Vec<Arg>)> = vec![
            ("find", vec![Arg::Int(12345), Arg::Int(3)]),
            ("find", vec![Arg::Float(1.5), text("%.")]),
            ("find", vec![Arg::Float(2.0), text("%.")]),
            ("find", vec![text("abc"), text("b"), text("2")]),
            ("find", vec![text("abc"), text("b"), Arg::Float(2.0)]),
            ("find", vec![text("abc"), text("b"), Arg::Float(2.5)]),
            ("find", vec![text("abc"), text("b"), text("x")]),
            ("find", vec![text("abc"), text("b"), Arg::Bool(true)]),
            ("find", vec![text("abc")]),
            ("find", vec![text("abc"), Arg::Nil]),
            ("find", vec![]),
            ("find", vec![text("abc"), text(""), Arg::Int(10)]),
            ("find", vec![text("abc"), text(""), Arg::Int(4)]),
            ("find", vec![text("abc"), text(""), Arg::Int(i64::MIN)]),
            ("find", vec![text("abc"), text(""), Arg::Int(i64::MAX)]),
            ("find", vec![text(&"a".repeat(300)), text(&deep)]),
            ("match", vec![text(&"a".repeat(300)), text(&deep)]),
            ("match", vec![text("x"), text(&many)]),
            ("match", vec![text("x"), text(&"()".repeat(32))]),
            ("gmatch", vec![text("^^^x"), text("^^*x")]),
            ("gmatch", vec![text("abc"), text(""), Arg::Int(10)]),
            ("gmatch", vec![text("abc"), text("")]),
            ("gsub", vec![text("abc"), text("b"), Arg::Nil]),
            ("gsub", vec![text("abc"), text("b"), Arg::Bool(true)]),
            (
                "gsub",
                vec![text("abc"), text("b"), Arg::Nil, Arg::Float(1.5)],
            ),
            ("gsub", vec![text("abc"), text("")]),
            ("gsub", vec![text("abc"), text("^"), text("x")]),
            ("gsub", vec![text("abc"), text("^a*"), text("x")]),
            ("gsub", vec![text("hello world"), text("(o)"), text("%2")]),
            ("gsub", vec![text("hello world"), text("()o"), text("%1")]),
            (
                "gsub",
                vec![text("hello world"), text("o"), Arg::Float(0.5)],
            ),
            ("gsub", vec![Arg::Int(123), text("2"), Arg::Int(9)]),
            ("match", vec![text("  x"), text("()(%s*)()")]),
            ("match", vec![text("f(a(b)c)d"), text("%b()")]),
            ("match", vec![text("THE (quick) fox"), text("%f[%a]%a+")]),
            ("match", vec![text("x"), text("%f")]),
            ("match", vec![text("x"), text("(x")]),
            ("match", vec![text("x"), text("x)")]),
        ];
        for (name, args) in &cases {
            compare(&ours, &theirs, name, args, &mut failures);
        }
        assert!(failures.is_empty(), "{}", failures.join("\n"));
    }
}
