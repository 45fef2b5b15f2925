//! Static checks of a script, before it runs: what `validate` warns about.
//!
//! The script is parsed with full_moon (a Lua 5.4 parser) and walked once, with the
//! locals of each scope known, against the API description ([`super::api`]):
//!
//! - an unknown `ctx` method or field (with the nearest name),
//! - an unknown field of a token table (`ctx:token(…)`, `ctx:tokens()`'s items, a token
//!   hook's `self`) or of a cell table (`ctx:targets()`'s items),
//! - a global the sandbox does not have (`print` → `ctx:log`, `os`, `io`, `require`,
//!   `load`, …) and a library member it does not have (`math.random` → `ctx:random`),
//! - a global assigned inside a hook,
//! - a path of a hook that must return a value (`income`) that returns nothing.
//!
//! Every check looks only at what it can be sure of: a name it cannot tell the kind of is
//! left alone, so a script that runs correctly gets no warning.
//!
//! Must not: run any script code, or walk recursively along a chain of binary operators
//! (its length is bounded only by the file's size; Lua's own parser bounds every other
//! nesting at 200 levels, and only scripts Lua compiled are checked).
//!
//! Zero warnings on every script of the repository but those wrong on purpose (a test).
//! Long operator chains are walked without recursion, on a stack sized by the source.

use std::collections::{HashMap, HashSet};
use std::path::Path;

use full_moon::ast::{
    self, Block, Call, Expression, Field, FunctionArgs, FunctionBody, Index, LastStmt, Parameter,
    Prefix, Stmt, Suffix, Var,
};
use full_moon::tokenizer::TokenReference;

use super::api::Api;
use crate::content::diagnostic::Diagnostic;
use crate::content::yaml::Loc;
use crate::rules::nearest;

/// One finding: where, and what to do.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Warning {
    pub line: u32,
    pub column: u32,
    pub message: String,
}

/// What a name or an expression is known to hold.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Unknown,
    Ctx,
    Token,
    Cell,
    TokenList,
    CellList,
}

/// The hook a function body is, by its place in the returned table.
struct HookFn<'a> {
    name: &'static str,
    body: &'a FunctionBody,
}

struct Checker<'a> {
    api: &'a Api,
    scopes: Vec<HashMap<String, Kind>>,
    /// The hooks of the returned table, by the address of their bodies.
    hooks: Vec<HookFn<'a>>,
    /// Set while walking inside a hook: its name.
    in_hook: Option<&'static str>,
    /// Globals the file sets anywhere (helpers, constants).
    assigned: HashSet<String>,
    /// Reads of globals neither the sandbox nor the file has, checked at the end.
    unknown_reads: Vec<(String, u32, u32)>,
    /// The file touches `_ENV`: global names are not checked.
    own_env: bool,
    base_globals: HashSet<&'static str>,
    out: Vec<Warning>,
}

fn pos(token: &TokenReference) -> (u32, u32) {
    let p = token.token().start_position();
    (
        u32::try_from(p.line()).unwrap_or(u32::MAX),
        u32::try_from(p.character()).unwrap_or(u32::MAX),
    )
}

fn name_of(token: &TokenReference) -> String {
    token.token().to_string()
}

/// Check one script's source. A source full_moon cannot parse gives nothing (Lua's own
/// compiler reports the syntax error).
#[must_use]
pub fn check(source: &str, api: &Api) -> Vec<Warning> {
    let result = full_moon::parse_fallible(source, full_moon::LuaVersion::lua54());
    if !result.errors().is_empty() {
        return Vec::new();
    }
    let ast = result.ast();
    let block = ast.nodes();
    let mut checker = Checker {
        api,
        scopes: vec![HashMap::new()],
        hooks: hook_functions(block, api),
        in_hook: None,
        assigned: HashSet::new(),
        unknown_reads: Vec::new(),
        own_env: source.contains("_ENV"),
        base_globals: api.globals.iter().map(|g| g.name).collect(),
        out: Vec::new(),
    };
    checker.block(block);
    checker.finish()
}

/// Stack per byte of source for [`check_on_own_stack`]: dropping a parsed chain of
/// binary operators (`a + a + …`, one per two bytes at most) recurses once per operator.
const STACK_PER_BYTE: usize = 128;

/// [`check`] on a stack of its own, large enough for the deepest tree the source can
/// make. The stack is reserved, not filled: only what the walk uses is touched.
#[must_use]
pub fn check_on_own_stack(source: &str, api: &Api) -> Vec<Warning> {
    let size = (1 << 20) + source.len().saturating_mul(STACK_PER_BYTE);
    stacker::grow(size, || check(source, api))
}

/// The warnings of every script of a catalog, as diagnostics at `file:line:col`.
#[must_use]
pub fn diagnostics(scripts: &[crate::rules::ScriptDef]) -> Vec<Diagnostic> {
    let api = super::api::describe();
    let mut out = Vec::new();
    for script in scripts {
        for w in check_on_own_stack(&script.source, &api) {
            out.push(Diagnostic::warning(
                Path::new(&script.file),
                Loc {
                    line: w.line,
                    column: w.column,
                },
                w.message,
            ));
        }
    }
    out
}

/// The functions the chunk returns as hooks: the fields of `return { … }`, or of the
/// table constructor of a top-level local the chunk returns (`local hooks = { … }`).
fn hook_functions<'a>(block: &'a Block, api: &Api) -> Vec<HookFn<'a>> {
    let Some(LastStmt::Return(ret)) = block.last_stmt() else {
        return Vec::new();
    };
    let Some(first) = ret.returns().iter().next() else {
        return Vec::new();
    };
    let table = match first {
        Expression::TableConstructor(t) => Some(&**t),
        Expression::Var(Var::Name(n)) => {
            let wanted = name_of(n);
            block
                .stmts()
                .filter_map(|s| match s {
                    Stmt::LocalAssignment(l) => l
                        .names()
                        .iter()
                        .position(|n| name_of(n) == wanted)
                        .and_then(|i| l.expressions().iter().nth(i)),
                    _ => None,
                })
                .last()
                .and_then(|e| match e {
                    Expression::TableConstructor(t) => Some(&**t),
                    _ => None,
                })
        }
        _ => None,
    };
    let mut out = Vec::new();
    for field in table.iter().flat_map(|t| t.fields().iter()) {
        if let Field::NameKey { key, value, .. } = field
            && let Expression::Function(f) = &**value
            && let Some(hook) = api.hook(&name_of(key))
        {
            out.push(HookFn {
                name: hook.name,
                body: f.body(),
            });
        }
    }
    out
}

impl<'a> Checker<'a> {
    fn warn(&mut self, (line, column): (u32, u32), message: String) {
        self.out.push(Warning {
            line,
            column,
            message,
        });
    }

    fn finish(mut self) -> Vec<Warning> {
        for (name, line, column) in std::mem::take(&mut self.unknown_reads) {
            if self.assigned.contains(&name) {
                continue;
            }
            let message = if name == "ctx" {
                "`ctx` is not a global: it is the first parameter of a hook \
                 (`on_place = function(ctx) … end`); pass it to helper functions"
                    .to_string()
            } else {
                let names = self
                    .base_globals
                    .iter()
                    .copied()
                    .chain(self.assigned.iter().map(String::as_str));
                let hint = nearest(&name, names)
                    .map(|n| format!(" (did you mean '{n}'?)"))
                    .unwrap_or_default();
                format!(
                    "'{name}' is not a global of the sandbox or of this script{hint}: it is nil \
                     here; define it, or make it a local"
                )
            };
            self.warn((line, column), message);
        }
        self.out.sort_by_key(|w| (w.line, w.column));
        self.out.dedup();
        self.out
    }

    fn lookup(&self, name: &str) -> Option<Kind> {
        self.scopes.iter().rev().find_map(|s| s.get(name).copied())
    }

    fn bind(&mut self, name: String, kind: Kind) {
        if let Some(scope) = self.scopes.last_mut() {
            scope.insert(name, kind);
        }
    }

    fn scoped(&mut self, f: impl FnOnce(&mut Self)) {
        self.scopes.push(HashMap::new());
        f(self);
        self.scopes.pop();
    }

    fn block(&mut self, block: &'a Block) {
        for stmt in block.stmts() {
            self.stmt(stmt);
        }
        if let Some(LastStmt::Return(ret)) = block.last_stmt() {
            for e in ret.returns() {
                self.expr(e);
            }
        }
    }

    fn stmt(&mut self, stmt: &'a Stmt) {
        match stmt {
            Stmt::Assignment(a) => {
                let kinds: Vec<Kind> = a.expressions().iter().map(|e| self.expr(e)).collect();
                for (i, var) in a.variables().iter().enumerate() {
                    let kind = kinds.get(i).copied().unwrap_or(Kind::Unknown);
                    match var {
                        Var::Name(n) => self.assign_name(n, kind),
                        Var::Expression(v) => {
                            self.prefix_and_suffixes(v.prefix(), v.suffixes(), true);
                        }
                        _ => {}
                    }
                }
            }
            Stmt::LocalAssignment(l) => {
                let kinds: Vec<Kind> = l.expressions().iter().map(|e| self.expr(e)).collect();
                for (i, n) in l.names().iter().enumerate() {
                    let kind = kinds.get(i).copied().unwrap_or(Kind::Unknown);
                    self.bind(name_of(n), kind);
                }
            }
            Stmt::LocalFunction(f) => {
                self.bind(name_of(f.name()), Kind::Unknown);
                self.function(f.body(), false);
            }
            Stmt::FunctionDeclaration(d) => {
                let name = d.name();
                let mut names = name.names().iter();
                if let Some(first) = names.next() {
                    let single = name.names().len() == 1 && name.method_name().is_none();
                    if single {
                        self.assign_name(first, Kind::Unknown);
                    } else {
                        self.read_name(first);
                    }
                }
                self.function(d.body(), name.method_name().is_some());
            }
            Stmt::FunctionCall(c) => {
                self.prefix_and_suffixes(c.prefix(), c.suffixes(), false);
            }
            Stmt::Do(d) => self.scoped(|s| s.block(d.block())),
            Stmt::While(w) => {
                self.expr(w.condition());
                self.scoped(|s| s.block(w.block()));
            }
            Stmt::Repeat(r) => self.scoped(|s| {
                s.block(r.block());
                s.expr(r.until());
            }),
            Stmt::If(i) => {
                self.expr(i.condition());
                self.scoped(|s| s.block(i.block()));
                for e in i.else_if().into_iter().flatten() {
                    self.expr(e.condition());
                    self.scoped(|s| s.block(e.block()));
                }
                if let Some(b) = i.else_block() {
                    self.scoped(|s| s.block(b));
                }
            }
            Stmt::NumericFor(f) => {
                self.expr(f.start());
                self.expr(f.end());
                if let Some(step) = f.step() {
                    self.expr(step);
                }
                self.scoped(|s| {
                    s.bind(name_of(f.index_variable()), Kind::Unknown);
                    s.block(f.block());
                });
            }
            Stmt::GenericFor(f) => {
                let exprs: Vec<&'a Expression> = f.expressions().iter().collect();
                let mut item = Kind::Unknown;
                for e in &exprs {
                    self.expr(e);
                }
                if let [only] = exprs.as_slice() {
                    item = self.iterated_kind(only);
                }
                self.scoped(|s| {
                    for (i, n) in f.names().iter().enumerate() {
                        s.bind(name_of(n), if i == 1 { item } else { Kind::Unknown });
                    }
                    s.block(f.block());
                });
            }
            _ => {}
        }
    }

    /// The kind of the values `for _, v in ipairs(list)` (or `pairs`) gives.
    fn iterated_kind(&mut self, e: &Expression) -> Kind {
        let Expression::FunctionCall(call) = e else {
            return Kind::Unknown;
        };
        let Prefix::Name(n) = call.prefix() else {
            return Kind::Unknown;
        };
        let iter = name_of(n);
        if (iter != "ipairs" && iter != "pairs") || self.lookup(&iter).is_some() {
            return Kind::Unknown;
        }
        let mut suffixes = call.suffixes();
        let (Some(Suffix::Call(Call::AnonymousCall(args))), None) =
            (suffixes.next(), suffixes.next())
        else {
            return Kind::Unknown;
        };
        let FunctionArgs::Parentheses { arguments, .. } = &**args else {
            return Kind::Unknown;
        };
        let Some(arg) = arguments.iter().next() else {
            return Kind::Unknown;
        };
        match self.kind_only(arg) {
            Kind::TokenList => Kind::Token,
            Kind::CellList => Kind::Cell,
            _ => Kind::Unknown,
        }
    }

    /// The kind of an expression already walked (no warnings): names and ctx calls.
    fn kind_only(&self, e: &Expression) -> Kind {
        match e {
            Expression::Var(Var::Name(n)) => self.lookup(&name_of(n)).unwrap_or(Kind::Unknown),
            Expression::FunctionCall(c) => {
                let Prefix::Name(n) = c.prefix() else {
                    return Kind::Unknown;
                };
                if self.lookup(&name_of(n)) != Some(Kind::Ctx) {
                    return Kind::Unknown;
                }
                let suffixes: Vec<&Suffix> = c.suffixes().collect();
                match suffixes.as_slice() {
                    [Suffix::Call(Call::MethodCall(m))] => method_kind(&name_of(m.name())),
                    _ => Kind::Unknown,
                }
            }
            Expression::Parentheses { expression, .. } => self.kind_only(expression),
            _ => Kind::Unknown,
        }
    }

    fn assign_name(&mut self, n: &TokenReference, kind: Kind) {
        let name = name_of(n);
        if self.lookup(&name).is_some() {
            // A local: it now holds what was assigned.
            for scope in self.scopes.iter_mut().rev() {
                if let Some(k) = scope.get_mut(&name) {
                    *k = kind;
                    break;
                }
            }
            return;
        }
        if self.own_env {
            return;
        }
        if let Some(hook) = self.in_hook {
            self.warn(
                pos(n),
                format!(
                    "the {hook} hook sets the global '{name}', which is an error when it runs \
                     (scripts keep no state between calls): make it a local (`local {name} = …`)"
                ),
            );
        }
        self.assigned.insert(name);
    }

    fn read_name(&mut self, n: &TokenReference) -> Kind {
        let name = name_of(n);
        if let Some(kind) = self.lookup(&name) {
            return kind;
        }
        if self.own_env || self.base_globals.contains(name.as_str()) {
            return Kind::Unknown;
        }
        if let Some(removed) = self.api.removed_globals.iter().find(|r| r.name == name) {
            self.warn(
                pos(n),
                format!(
                    "'{name}' is not available in scripts (the sandbox has no '{name}'): use {}",
                    removed.instead
                ),
            );
            return Kind::Unknown;
        }
        let (line, column) = pos(n);
        self.unknown_reads.push((name, line, column));
        Kind::Unknown
    }

    /// Walk a function: a new scope with its parameters; a hook's get their kinds.
    fn function(&mut self, body: &'a FunctionBody, method: bool) {
        let hook = self
            .hooks
            .iter()
            .find(|h| std::ptr::eq(h.body, body))
            .map(|h| h.name);
        let api = self.api;
        let outer = self.in_hook;
        if hook.is_some() {
            self.in_hook = hook;
        }
        self.scoped(|s| {
            if method {
                s.bind("self".to_string(), Kind::Unknown);
            }
            let described = hook.and_then(|h| api.hook(h));
            for (i, p) in body.parameters().iter().enumerate() {
                let Parameter::Name(n) = p else { continue };
                let name = name_of(n);
                let kind = match described.and_then(|h| h.params.get(i)).map(|p| p.ty) {
                    Some("Ctx") => Kind::Ctx,
                    Some("Token") => Kind::Token,
                    _ if name == "ctx" => Kind::Ctx,
                    _ => Kind::Unknown,
                };
                s.bind(name, kind);
            }
            s.block(body.block());
        });
        self.in_hook = outer;
        if let Some(h) = hook.and_then(|h| api.hook(h))
            && h.must_return
        {
            let what = h.returns.as_ref().map_or("a value", |r| r.doc);
            let fix = h.params.last().map_or("a value", |p| p.name);
            if let Some(at) = falls_through(body.block(), body.end_token()) {
                self.warn(
                    at,
                    format!(
                        "the {} hook must return {what}, but this path returns nothing \
                         (an error when it runs): end it with `return {fix}` or another value",
                        h.name
                    ),
                );
            }
        }
    }

    fn expr(&mut self, e: &'a Expression) -> Kind {
        match e {
            Expression::BinaryOperator { .. } => {
                // Down the left spine without recursion: a chain `a + b + c …` nests to
                // the left as deep as it is long.
                let mut left = e;
                while let Expression::BinaryOperator { lhs, rhs, .. } = left {
                    self.expr(rhs);
                    left = lhs;
                }
                self.expr(left);
                Kind::Unknown
            }
            Expression::Parentheses { expression, .. } => self.expr(expression),
            Expression::UnaryOperator { expression, .. } => {
                self.expr(expression);
                Kind::Unknown
            }
            Expression::Function(f) => {
                self.function(f.body(), false);
                Kind::Unknown
            }
            Expression::FunctionCall(c) => {
                self.prefix_and_suffixes(c.prefix(), c.suffixes(), false)
            }
            Expression::TableConstructor(t) => {
                self.table(t);
                Kind::Unknown
            }
            Expression::Var(Var::Name(n)) => self.read_name(n),
            Expression::Var(Var::Expression(v)) => {
                self.prefix_and_suffixes(v.prefix(), v.suffixes(), false)
            }
            _ => Kind::Unknown,
        }
    }

    fn args(&mut self, args: &'a FunctionArgs) {
        match args {
            FunctionArgs::Parentheses { arguments, .. } => {
                for a in arguments {
                    self.expr(a);
                }
            }
            FunctionArgs::TableConstructor(t) => self.table(t),
            _ => {}
        }
    }

    fn table(&mut self, t: &'a ast::TableConstructor) {
        for field in t.fields() {
            match field {
                Field::ExpressionKey { key, value, .. } => {
                    self.expr(key);
                    self.expr(value);
                }
                Field::NameKey { value, .. } => {
                    self.expr(value);
                }
                Field::NoKey(value) => {
                    self.expr(value);
                }
                _ => {}
            }
        }
    }

    /// `prefix.suffix:suffix(…)…`: the names it reads, checked against what the prefix
    /// holds; the kind of the whole. `target`: the expression is assigned to, so its last
    /// field is written, not read.
    fn prefix_and_suffixes(
        &mut self,
        prefix: &'a Prefix,
        suffixes: impl Iterator<Item = &'a Suffix>,
        target: bool,
    ) -> Kind {
        let (mut kind, library) = match prefix {
            Prefix::Name(n) => {
                let name = name_of(n);
                let library = if self.lookup(&name).is_none() && !self.own_env {
                    self.api
                        .globals
                        .iter()
                        .find(|g| g.kind == "library" && g.name == name)
                } else {
                    None
                };
                (self.read_name(n), library)
            }
            Prefix::Expression(e) => (self.expr(e), None),
            _ => (Kind::Unknown, None),
        };
        let suffixes: Vec<&'a Suffix> = suffixes.collect();
        let last = suffixes.len().saturating_sub(1);
        for (i, suffix) in suffixes.iter().enumerate() {
            let next_is_call = matches!(suffixes.get(i + 1), Some(Suffix::Call(_)));
            let written = target && i == last;
            kind = match suffix {
                Suffix::Index(Index::Dot { name, .. }) => {
                    let field = name_of(name);
                    if i == 0
                        && let Some(lib) = library
                        && !lib.members.contains(&field.as_str())
                        && !written
                    {
                        let instead = match (lib.name, field.as_str()) {
                            ("math", "random" | "randomseed") => {
                                " (randomness comes from the game: ctx:random(n))".to_string()
                            }
                            _ => nearest(&field, lib.members.iter().copied())
                                .map(|n| format!(" (did you mean {}.{n}?)", lib.name))
                                .unwrap_or_default(),
                        };
                        self.warn(
                            pos(name),
                            format!("the sandbox's {} has no '{field}'{instead}", lib.name),
                        );
                    }
                    self.field(kind, name, next_is_call, written)
                }
                Suffix::Index(Index::Brackets { expression, .. }) => {
                    self.expr(expression);
                    match kind {
                        Kind::TokenList => Kind::Token,
                        Kind::CellList => Kind::Cell,
                        _ => Kind::Unknown,
                    }
                }
                Suffix::Call(Call::MethodCall(m)) => {
                    let result = if kind == Kind::Ctx {
                        self.ctx_method(m.name())
                    } else {
                        Kind::Unknown
                    };
                    self.args(m.args());
                    result
                }
                Suffix::Call(Call::AnonymousCall(args)) => {
                    self.args(args);
                    Kind::Unknown
                }
                _ => Kind::Unknown,
            };
        }
        kind
    }

    /// `x.name` where `x` holds `kind`.
    fn field(&mut self, kind: Kind, name: &TokenReference, called: bool, written: bool) -> Kind {
        let field = name_of(name);
        let api = self.api;
        match kind {
            Kind::Ctx => {
                let is_field = api.ctx_fields.iter().any(|f| f.name == field);
                let is_method = api.method(&field).is_some();
                if !is_field && !is_method && !written {
                    let names = api
                        .ctx_fields
                        .iter()
                        .map(|f| f.name)
                        .chain(api.ctx_methods.iter().map(|m| m.name));
                    let hint = nearest(&field, names)
                        .map(|n| match api.method(&n) {
                            Some(_) => format!(" (did you mean ctx:{n}(…)?)"),
                            None => format!(" (did you mean ctx.{n}?)"),
                        })
                        .unwrap_or_default();
                    self.warn(pos(name), format!("ctx has no field '{field}'{hint}"));
                }
                // `ctx.damage(…)` is reported with its own advice (see `dot_calls`).
                let _ = called;
                Kind::Unknown
            }
            Kind::Token | Kind::Cell => {
                let fields = if kind == Kind::Token {
                    &api.token_fields
                } else {
                    &api.cell_fields
                };
                let what = if kind == Kind::Token {
                    "a token"
                } else {
                    "a cell"
                };
                if !written && !fields.iter().any(|f| f.name == field) {
                    let hint = nearest(&field, fields.iter().map(|f| f.name))
                        .map(|n| format!("did you mean '{n}'? "))
                        .unwrap_or_default();
                    let all: Vec<&str> = fields.iter().map(|f| f.name).collect();
                    self.warn(
                        pos(name),
                        format!(
                            "{what} has no field '{field}' ({hint}its fields are {}): it reads nil",
                            all.join(", ")
                        ),
                    );
                }
                Kind::Unknown
            }
            _ => Kind::Unknown,
        }
    }

    /// `ctx:name(…)`: warn when ctx has no such function; the kind of its result.
    fn ctx_method(&mut self, name: &TokenReference) -> Kind {
        let method = name_of(name);
        if self.api.method(&method).is_none() {
            let names = self.api.ctx_methods.iter().map(|m| m.name);
            let hint = nearest(&method, names)
                .map(|n| format!(": did you mean ctx:{n}(…)?"))
                .unwrap_or_else(|| ": see `tokensmith api` for its functions".to_string());
            self.warn(
                pos(name),
                format!("ctx has no function '{method}' (an error when it runs){hint}"),
            );
        }
        method_kind(&method)
    }
}

fn method_kind(method: &str) -> Kind {
    match method {
        "token" => Kind::Token,
        "tokens" => Kind::TokenList,
        "targets" => Kind::CellList,
        _ => Kind::Unknown,
    }
}

/// Where a block can end without returning a value: the place of the path that falls
/// through (the `if` whose branch is missing, the loop, the last statement, or the
/// function's `end`), or None when every path returns or raises an error.
fn falls_through(block: &Block, end: &TokenReference) -> Option<(u32, u32)> {
    match block.last_stmt() {
        Some(LastStmt::Return(ret)) => {
            if ret.returns().is_empty() {
                Some(pos(ret.token()))
            } else {
                None
            }
        }
        Some(_) => Some(pos(end)),
        None => match block.stmts().last() {
            None => Some(pos(end)),
            Some(Stmt::If(i)) => {
                let Some(else_block) = i.else_block() else {
                    return Some(pos(i.if_token()));
                };
                falls_through(i.block(), i.end_token())
                    .or_else(|| {
                        i.else_if()
                            .into_iter()
                            .flatten()
                            .find_map(|e| falls_through(e.block(), i.end_token()))
                    })
                    .or_else(|| falls_through(else_block, i.end_token()))
            }
            Some(Stmt::Do(d)) => falls_through(d.block(), d.end_token()),
            Some(Stmt::FunctionCall(c)) if raises(c) => None,
            Some(_) => Some(pos(end)),
        },
    }
}

/// `error(…)` as a statement: that path ends in an error, not a missing value.
fn raises(call: &ast::FunctionCall) -> bool {
    matches!(call.prefix(), Prefix::Name(n) if name_of(n) == "error")
        && call.suffixes().count() == 1
}

#[cfg(test)]
#[path = "lint_tests.rs"]
mod tests;
