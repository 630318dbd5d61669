//! Reads the textual form written by [`crate::printer`] back into IR.
//!
//! A hand-written, scannerless recursive-descent parser over the source
//! characters (types such as `tensor<64x32xf16>` do not split into ordinary
//! tokens). Whitespace and `//` comments are skipped; newlines matter in one
//! place only: an op's operand list must start on the op's line, so that an
//! operand-less op is not mistaken for the start of the next op.
//!
//! Values are looked up by name in one table per function: a use must come
//! after its definition in the text (scoping by region nesting is the
//! verifier's job). Every error is a [`ParseError`] with a 1-based line and
//! column; no input makes the parser panic.

use std::collections::HashMap;
use std::fmt;

use crate::function::{Block, Function, Module, ParamHints, Value};
use crate::ops::*;
use crate::printer;
use crate::types::{Elem, ScalarType, Type};

/// A syntax error at a 1-based `line:col`.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct ParseError {
    pub line: u32,
    pub col: u32,
    pub message: String,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}: {}", self.line, self.col, self.message)
    }
}

impl std::error::Error for ParseError {}

type PResult<T> = Result<T, ParseError>;

/// Parses a module: an optional `// source: FILE` first line, then functions.
pub fn parse_module(text: &str) -> PResult<Module> {
    let mut p = Parser::new(text);
    let mut module = Module::default();
    let first_line = text.lines().next().unwrap_or("");
    if let Some(src) = first_line.strip_prefix("// source: ") {
        module.source_file = Some(src.to_string());
        p.pos = first_line.len();
    }
    loop {
        p.ws();
        if p.at_end() {
            break;
        }
        module.functions.push(p.function()?);
    }
    Ok(module)
}

/// Parses exactly one function.
pub fn parse_function(text: &str) -> PResult<Function> {
    let mut p = Parser::new(text);
    let f = p.function()?;
    p.ws();
    if !p.at_end() {
        return Err(p.err("expected end of input after the function"));
    }
    Ok(f)
}

/// Parses a type in the syntax of [`Type`]'s `Display` (`i32`, `ptr<f16>`,
/// `tensor<64x32xf16>`, `block_ptr<tensor<64xf32>>`, `tensordesc<...>`,
/// `aref<2 x (tensor<64x32xf16>, ...)>`).
pub fn parse_type(text: &str) -> PResult<Type> {
    let mut p = Parser::new(text);
    let t = p.ty()?;
    p.ws();
    if !p.at_end() {
        return Err(p.err("expected end of input after the type"));
    }
    Ok(t)
}

/// A parsed attribute value, before an op kind gives it meaning.
#[derive(Clone, Debug)]
enum AttrVal {
    Flag,
    Int(i64),
    Word(String),
    Str(String),
    List(Vec<i64>),
    Dict(Vec<(String, String)>),
}

/// An attribute dictionary being consumed by an op kind; leftovers are errors.
struct Attrs {
    items: Vec<(String, AttrVal, usize)>,
}

struct Parser<'a> {
    src: &'a str,
    pos: usize,
    /// Values by printed name (without `%`) in the function being parsed.
    values: HashMap<String, Value>,
    /// Nesting of regions being parsed; bounded so that hostile input
    /// cannot overflow the stack.
    depth: usize,
}

/// Deepest region nesting accepted.
const MAX_DEPTH: usize = 200;

impl<'a> Parser<'a> {
    fn new(src: &'a str) -> Parser<'a> {
        Parser {
            src,
            pos: 0,
            values: HashMap::new(),
            depth: 0,
        }
    }

    // ---- positions and errors ----

    fn err_at(&self, pos: usize, message: impl Into<String>) -> ParseError {
        let pos = pos.min(self.src.len());
        let before = &self.src.as_bytes()[..pos];
        let line = before.iter().filter(|&&b| b == b'\n').count() as u32 + 1;
        let line_start = before
            .iter()
            .rposition(|&b| b == b'\n')
            .map_or(0, |i| i + 1);
        // Columns count characters, not bytes.
        let col = String::from_utf8_lossy(&before[line_start..])
            .chars()
            .count() as u32
            + 1;
        ParseError {
            line,
            col,
            message: message.into(),
        }
    }

    fn err(&self, message: impl Into<String>) -> ParseError {
        self.err_at(self.pos, message)
    }

    /// What the input holds at the cursor, for "expected X, found Y".
    fn found(&self) -> String {
        let rest = &self.src[self.pos..];
        match rest.chars().next() {
            None => "end of input".into(),
            Some(c) if c.is_ascii_alphanumeric() || c == '_' => {
                let word: String = rest
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == '.')
                    .collect();
                format!("'{word}'")
            }
            Some(c) => format!("'{c}'"),
        }
    }

    fn expected(&mut self, what: &str) -> ParseError {
        self.ws();
        let found = self.found();
        self.err(format!("expected {what}, found {found}"))
    }

    // ---- characters ----

    fn rest(&self) -> &'a str {
        &self.src[self.pos..]
    }

    fn at_end(&self) -> bool {
        self.pos >= self.src.len()
    }

    fn peek(&self) -> Option<char> {
        self.rest().chars().next()
    }

    /// Skips whitespace and `//` comments.
    fn ws(&mut self) {
        loop {
            let rest = self.rest();
            let trimmed = rest.trim_start();
            self.pos += rest.len() - trimmed.len();
            if self.rest().starts_with("//") {
                self.pos += self.rest().find('\n').unwrap_or(self.rest().len());
            } else {
                break;
            }
        }
    }

    /// Skips spaces and tabs only.
    fn ws_inline(&mut self) {
        let rest = self.rest();
        let trimmed = rest.trim_start_matches([' ', '\t']);
        self.pos += rest.len() - trimmed.len();
    }

    /// Consumes punctuation `lit` after whitespace.
    fn eat(&mut self, lit: &str) -> bool {
        self.ws();
        if self.rest().starts_with(lit) {
            self.pos += lit.len();
            true
        } else {
            false
        }
    }

    fn expect(&mut self, lit: &str) -> PResult<()> {
        if self.eat(lit) {
            Ok(())
        } else {
            Err(self.expected(&format!("'{lit}'")))
        }
    }

    /// Consumes the keyword `kw` (not a prefix of a longer word).
    fn eat_kw(&mut self, kw: &str) -> bool {
        self.ws();
        let rest = self.rest();
        if rest.starts_with(kw)
            && !rest[kw.len()..]
                .starts_with(|c: char| c.is_ascii_alphanumeric() || c == '_' || c == '.')
        {
            self.pos += kw.len();
            true
        } else {
            false
        }
    }

    fn expect_kw(&mut self, kw: &str) -> PResult<()> {
        if self.eat_kw(kw) {
            Ok(())
        } else {
            Err(self.expected(&format!("'{kw}'")))
        }
    }

    /// A word: `[A-Za-z_][A-Za-z0-9_.]*` (op names have dots: `cmp.lt`).
    fn word(&mut self, what: &str) -> PResult<String> {
        self.ws();
        let rest = self.rest();
        if !rest.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_') {
            return Err(self.expected(what));
        }
        let len = rest
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '.'))
            .unwrap_or(rest.len());
        self.pos += len;
        Ok(rest[..len].to_string())
    }

    /// An identifier or a string literal (names that are not identifiers).
    fn name_or_string(&mut self, what: &str) -> PResult<String> {
        self.ws();
        if self.peek() == Some('"') {
            self.string()
        } else {
            self.word(what)
        }
    }

    fn string(&mut self) -> PResult<String> {
        self.ws();
        let start = self.pos;
        if self.peek() != Some('"') {
            return Err(self.expected("a string"));
        }
        self.pos += 1;
        let mut out = String::new();
        loop {
            let Some(c) = self.peek() else {
                return Err(self.err_at(start, "unterminated string"));
            };
            self.pos += c.len_utf8();
            match c {
                '"' => return Ok(out),
                '\\' => {
                    let esc_pos = self.pos - 1;
                    let Some(e) = self.peek() else {
                        return Err(self.err_at(start, "unterminated string"));
                    };
                    self.pos += e.len_utf8();
                    match e {
                        '"' => out.push('"'),
                        '\\' => out.push('\\'),
                        'n' => out.push('\n'),
                        't' => out.push('\t'),
                        'r' => out.push('\r'),
                        'u' => {
                            let rest = self.rest();
                            let close = rest.find('}');
                            let code = match (rest.strip_prefix('{'), close) {
                                (Some(_), Some(close)) => u32::from_str_radix(&rest[1..close], 16)
                                    .ok()
                                    .and_then(char::from_u32),
                                _ => None,
                            };
                            match code {
                                Some(ch) => {
                                    out.push(ch);
                                    self.pos += close.unwrap_or(0) + 1;
                                }
                                None => {
                                    return Err(self
                                        .err_at(esc_pos, "bad unicode escape, expected \\u{HEX}"))
                                }
                            }
                        }
                        other => {
                            return Err(self.err_at(esc_pos, format!("unknown escape '\\{other}'")))
                        }
                    }
                }
                c => out.push(c),
            }
        }
    }

    fn int(&mut self) -> PResult<i64> {
        self.ws();
        let start = self.pos;
        let rest = self.rest();
        let neg = rest.starts_with('-');
        let digits = &rest[neg as usize..];
        let len = digits
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(digits.len());
        if len == 0 {
            return Err(self.expected("an integer"));
        }
        let text = &rest[..neg as usize + len];
        self.pos += text.len();
        text.parse::<i64>()
            .map_err(|_| self.err_at(start, format!("integer {text} out of range")))
    }

    fn u32(&mut self) -> PResult<u32> {
        self.ws();
        let start = self.pos;
        let v = self.int()?;
        u32::try_from(v).map_err(|_| self.err_at(start, format!("{v} is not a u32")))
    }

    // ---- types ----

    fn ty(&mut self) -> PResult<Type> {
        self.ws();
        let start = self.pos;
        let word = self.type_word();
        match word.as_str() {
            "tensor" => {
                let (shape, elem) = self.tensor_body()?;
                Ok(Type::Tensor { shape, elem })
            }
            "aref" => {
                // `aref<D x (T, ...)>`
                self.expect("<")?;
                let depth = self.u32()?;
                self.ws();
                if !self.rest().starts_with('x') {
                    return Err(self.expected("'x' after the aref depth"));
                }
                self.pos += 1;
                let buffers = self.paren_types()?;
                self.expect(">")?;
                Ok(Type::Aref { depth, buffers })
            }
            "block_ptr" | "tensordesc" => {
                self.expect("<")?;
                self.ws();
                let inner = self.pos;
                if self.type_word() != "tensor" {
                    return Err(self.err_at(inner, format!("expected 'tensor<...>' in {word}")));
                }
                let (shape, elem) = self.tensor_body()?;
                self.expect(">")?;
                let Elem::Scalar(s) = elem else {
                    return Err(self.err_at(inner, format!("{word} of pointers")));
                };
                Ok(if word == "block_ptr" {
                    Type::BlockPtr { pointee: s, shape }
                } else {
                    Type::TensorDesc {
                        elem: s,
                        block: shape,
                    }
                })
            }
            _ => {
                self.pos = start;
                Ok(Type::Scalar(self.elem()?))
            }
        }
    }

    /// `[a-z0-9_]*` at the cursor (no whitespace skipping).
    fn type_word(&mut self) -> String {
        let rest = self.rest();
        let len = rest
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(rest.len());
        self.pos += len;
        rest[..len].to_string()
    }

    /// `<DxDx...ELEM>` after `tensor`.
    fn tensor_body(&mut self) -> PResult<(Vec<u32>, Elem)> {
        self.expect("<")?;
        let mut shape = Vec::new();
        loop {
            self.ws();
            let rest = self.rest();
            let len = rest
                .find(|c: char| !c.is_ascii_digit())
                .unwrap_or(rest.len());
            if len == 0 {
                break;
            }
            let start = self.pos;
            let dim = rest[..len]
                .parse::<u32>()
                .map_err(|_| self.err_at(start, "dimension out of range"))?;
            self.pos += len;
            if !self.rest().starts_with('x') {
                return Err(self.err("expected 'x' after a dimension"));
            }
            self.pos += 1;
            shape.push(dim);
        }
        let elem = self.elem()?;
        self.expect(">")?;
        Ok((shape, elem))
    }

    fn scalar_type(&mut self) -> PResult<ScalarType> {
        self.ws();
        let start = self.pos;
        let word = self.type_word();
        ScalarType::parse(&word).ok_or_else(|| {
            self.pos = start;
            self.err_at(start, format!("expected a type, found {}", self.found()))
        })
    }

    fn elem(&mut self) -> PResult<Elem> {
        self.ws();
        if self.rest().starts_with("ptr<") {
            self.pos += 3;
            self.expect("<")?;
            let s = self.scalar_type()?;
            self.expect(">")?;
            Ok(Elem::Ptr(s))
        } else {
            Ok(Elem::Scalar(self.scalar_type()?))
        }
    }

    fn type_list(&mut self) -> PResult<Vec<Type>> {
        let mut tys = vec![self.ty()?];
        while self.eat(",") {
            tys.push(self.ty()?);
        }
        Ok(tys)
    }

    /// `(T, ...)`, possibly empty.
    fn paren_types(&mut self) -> PResult<Vec<Type>> {
        self.expect("(")?;
        if self.eat(")") {
            return Ok(Vec::new());
        }
        let tys = self.type_list()?;
        self.expect(")")?;
        Ok(tys)
    }

    // ---- values ----

    /// `%name` being defined; returns the name without `%` and its position.
    fn value_name(&mut self) -> PResult<(String, usize)> {
        self.ws();
        let start = self.pos;
        if self.peek() != Some('%') {
            return Err(self.expected("a value ('%name')"));
        }
        self.pos += 1;
        let rest = self.rest();
        let len = rest
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(rest.len());
        if len == 0 {
            return Err(self.err("expected a value name after '%'"));
        }
        self.pos += len;
        Ok((rest[..len].to_string(), start))
    }

    /// A use of a defined value.
    fn value_use(&mut self) -> PResult<Value> {
        let (name, pos) = self.value_name()?;
        self.values
            .get(&name)
            .copied()
            .ok_or_else(|| self.err_at(pos, format!("use of undefined value %{name}")))
    }

    /// Registers a definition of `%name`; numeric names are unnamed values.
    fn define(&mut self, f: &mut Function, v: Value, name: &str, pos: usize) -> PResult<()> {
        if self.values.insert(name.to_string(), v).is_some() {
            return Err(self.err_at(pos, format!("redefinition of %{name}")));
        }
        f.values[v].name = if name.starts_with(|c: char| c.is_ascii_digit()) {
            None
        } else {
            Some(name.to_string())
        };
        Ok(())
    }

    /// `%a: T` as a new argument of `block`.
    fn block_arg(&mut self, f: &mut Function, block: Block) -> PResult<Value> {
        let (name, pos) = self.value_name()?;
        self.expect(":")?;
        let ty = self.ty()?;
        let v = f.add_block_arg(block, ty, None);
        self.define(f, v, &name, pos)?;
        Ok(v)
    }

    // ---- attributes ----

    fn attr_dict(&mut self) -> PResult<Attrs> {
        self.attr_items("{", "}")
    }

    /// `OPEN key = value, flag, ... CLOSE`: the dictionary syntax between
    /// any delimiters (partitions write theirs in parentheses).
    fn attr_items(&mut self, open: &str, close: &str) -> PResult<Attrs> {
        self.expect(open)?;
        let mut items = Vec::new();
        if self.eat(close) {
            return Ok(Attrs { items });
        }
        loop {
            self.ws();
            let pos = self.pos;
            let key = self.name_or_string("an attribute name")?;
            if items.iter().any(|(k, _, _)| *k == key) {
                return Err(self.err_at(pos, format!("duplicate attribute '{key}'")));
            }
            let val = if self.eat("=") {
                self.attr_value()?
            } else {
                AttrVal::Flag
            };
            items.push((key, val, pos));
            if self.eat(close) {
                return Ok(Attrs { items });
            }
            if !self.eat(",") {
                return Err(self.expected(&format!("',' or '{close}'")));
            }
        }
    }

    fn attr_value(&mut self) -> PResult<AttrVal> {
        self.ws();
        match self.peek() {
            Some('"') => Ok(AttrVal::Str(self.string()?)),
            Some('[') => {
                self.pos += 1;
                let mut xs = Vec::new();
                if self.eat("]") {
                    return Ok(AttrVal::List(xs));
                }
                loop {
                    xs.push(self.int()?);
                    if self.eat("]") {
                        return Ok(AttrVal::List(xs));
                    }
                    if !self.eat(",") {
                        return Err(self.expected("',' or ']'"));
                    }
                }
            }
            Some('{') => {
                self.pos += 1;
                let mut kv = Vec::new();
                if self.eat("}") {
                    return Ok(AttrVal::Dict(kv));
                }
                loop {
                    let k = self.name_or_string("a name")?;
                    self.expect("=")?;
                    let v = self.string()?;
                    kv.push((k, v));
                    if self.eat("}") {
                        return Ok(AttrVal::Dict(kv));
                    }
                    if !self.eat(",") {
                        return Err(self.expected("',' or '}'"));
                    }
                }
            }
            Some(c) if c == '-' || c.is_ascii_digit() => Ok(AttrVal::Int(self.int()?)),
            Some(c) if c.is_ascii_alphabetic() || c == '_' => {
                Ok(AttrVal::Word(self.word("a value")?))
            }
            _ => Err(self.expected("an attribute value")),
        }
    }

    // ---- functions ----

    fn function(&mut self) -> PResult<Function> {
        self.values.clear();
        self.expect_kw("tt.func")?;
        self.expect("@")?;
        let name = self.name_or_string("a function name")?;
        let mut f = Function::new(name);
        self.expect("(")?;
        if !self.eat(")") {
            loop {
                let (vname, pos) = self.value_name()?;
                self.expect(":")?;
                let ty = self.ty()?;
                let mut hints = ParamHints::default();
                let mut pname = vname.clone();
                self.ws();
                if self.peek() == Some('{') {
                    let mut a = self.attr_dict()?;
                    if let Some(n) = a.take_str(self, "name")? {
                        pname = n;
                    }
                    hints.divisibility = a.take_u32(self, "divisibility")?;
                    a.finish(self, "a parameter")?;
                }
                let v = f.add_param(pname, ty, hints);
                self.define(&mut f, v, &vname, pos)?;
                if self.eat(")") {
                    break;
                }
                if !self.eat(",") {
                    return Err(self.expected("',' or ')'"));
                }
            }
        }
        if self.eat_kw("attributes") {
            let mut a = self.attr_dict()?;
            if let Some(n) = a.take_u32(self, "num_warps")? {
                f.attrs.num_warps = n;
            }
            if let Some(n) = a.take_u32(self, "num_stages")? {
                f.attrs.num_stages = n;
            }
            if let Some(c) = a.take_dict(self, "constexprs")? {
                f.attrs.constexprs = c;
            }
            f.attrs.grid_param = a.take_str(self, "grid_param")?;
            f.attrs.grid_param_y = a.take_str(self, "grid_param_y")?;
            f.attrs.grid_param_z = a.take_str(self, "grid_param_z")?;
            if let Some(n) = a.take_u32(self, "cluster")? {
                f.attrs.cluster = n;
            }
            f.attrs.cluster_split_k = a.take_flag(self, "cluster_split_k")?;
            f.attrs.stream_k = a.take_flag(self, "stream_k")?;
            if let Some(n) = a.take_u32(self, "occupancy")? {
                f.attrs.occupancy = n;
            }
            let walk_step = a.take_str(self, "walk_step")?;
            let walk_asked = a.take_u32(self, "walk_asked")?;
            f.attrs.walk_step = match (walk_step, walk_asked) {
                (Some(p), Some(c)) => Some((p, c)),
                (None, None) => None,
                _ => return Err(self.err("`walk_step` and `walk_asked` come together")),
            };
            f.attrs.programmatic_launch_asked = a.take_flag(self, "programmatic_launch_asked")?;
            f.attrs.mixed_copies = a.take_flag(self, "mixed_copies")?;
            a.finish(self, "a function")?;
        }
        self.expect("{")?;
        let body = f.body;
        self.block_ops(&mut f, body)?;
        Ok(f)
    }

    /// Ops up to and including the closing `}` of a block.
    fn block_ops(&mut self, f: &mut Function, block: Block) -> PResult<()> {
        if self.depth >= MAX_DEPTH {
            return Err(self.err(format!("regions nested deeper than {MAX_DEPTH}")));
        }
        self.depth += 1;
        let result = self.block_ops_inner(f, block);
        self.depth -= 1;
        result
    }

    fn block_ops_inner(&mut self, f: &mut Function, block: Block) -> PResult<()> {
        loop {
            if self.eat("}") {
                return Ok(());
            }
            self.ws();
            if self.at_end() {
                return Err(self.err("expected an op or '}', found end of input"));
            }
            self.op(f, block)?;
        }
    }

    fn loc(&mut self) -> PResult<Loc> {
        if !self.eat_kw("loc") {
            return Ok(Loc::UNKNOWN);
        }
        self.expect("(")?;
        let line = self.u32()?;
        self.expect(":")?;
        let col = self.u32()?;
        self.expect(")")?;
        Ok(Loc::new(line, col))
    }

    fn op(&mut self, f: &mut Function, block: Block) -> PResult<()> {
        let mut results = Vec::new();
        self.ws();
        if self.peek() == Some('%') {
            loop {
                results.push(self.value_name()?);
                if !self.eat(",") {
                    break;
                }
            }
            self.expect("=")?;
        }
        self.ws();
        let op_pos = self.pos;
        let mnemonic = self.word("an op name")?;
        let (kind, operands, result_types, regions) = match mnemonic.as_str() {
            "for" => self.for_op(f)?,
            "if" => self.if_op(f)?,
            "while" => self.while_op(f)?,
            "ws" => self.ws_op(f)?,
            _ => {
                let (kind, operands, tys) = self.plain_op(f, &mnemonic, op_pos)?;
                (kind, operands, tys, Vec::new())
            }
        };
        let loc = self.loc()?;
        if result_types.len() != results.len() {
            return Err(self.err_at(
                op_pos,
                format!(
                    "'{mnemonic}' defines {} value(s) but has {} result type(s)",
                    results.len(),
                    result_types.len()
                ),
            ));
        }
        let op = f.append_op(block, kind, operands, result_types, regions, loc);
        for (i, (name, pos)) in results.iter().enumerate() {
            let v = f.ops[op].results[i];
            self.define(f, v, name, *pos)?;
        }
        Ok(())
    }

    /// `-> (T, ...)` if present.
    fn arrow_results(&mut self) -> PResult<Vec<Type>> {
        if self.eat("->") {
            self.paren_types()
        } else {
            Ok(Vec::new())
        }
    }

    #[allow(clippy::type_complexity)]
    fn for_op(&mut self, f: &mut Function) -> PResult<(OpKind, Vec<Value>, Vec<Type>, Vec<Block>)> {
        let body = f.new_block(Vec::new());
        self.block_arg(f, body)?;
        self.expect("=")?;
        let mut operands = vec![self.value_use()?];
        self.expect_kw("to")?;
        operands.push(self.value_use()?);
        self.expect_kw("step")?;
        operands.push(self.value_use()?);
        if self.eat_kw("iter_args") {
            self.expect("(")?;
            loop {
                self.block_arg(f, body)?;
                self.expect("=")?;
                operands.push(self.value_use()?);
                if self.eat(")") {
                    break;
                }
                if !self.eat(",") {
                    return Err(self.expected("',' or ')'"));
                }
            }
        }
        let result_types = self.arrow_results()?;
        let mut attrs = LoopAttrs::default();
        if self.eat_kw("attrs") {
            let mut a = self.attr_dict()?;
            attrs.num_stages = a.take_u32(self, "num_stages")?;
            attrs.loop_unroll_factor = a.take_u32(self, "loop_unroll_factor")?;
            attrs.disallow_acc_multi_buffer = a.take_flag(self, "disallow_acc_multi_buffer")?;
            attrs.flatten = a.take_flag(self, "flatten")?;
            attrs.warp_specialize = a.take_flag(self, "warp_specialize")?;
            a.finish(self, "'for'")?;
        }
        self.expect("{")?;
        self.block_ops(f, body)?;
        Ok((OpKind::For(attrs), operands, result_types, vec![body]))
    }

    #[allow(clippy::type_complexity)]
    fn if_op(&mut self, f: &mut Function) -> PResult<(OpKind, Vec<Value>, Vec<Type>, Vec<Block>)> {
        let cond = self.value_use()?;
        let result_types = self.arrow_results()?;
        let then_block = f.new_block(Vec::new());
        self.expect("{")?;
        self.block_ops(f, then_block)?;
        self.expect_kw("else")?;
        let else_block = f.new_block(Vec::new());
        self.expect("{")?;
        self.block_ops(f, else_block)?;
        Ok((
            OpKind::If,
            vec![cond],
            result_types,
            vec![then_block, else_block],
        ))
    }

    #[allow(clippy::type_complexity)]
    fn while_op(
        &mut self,
        f: &mut Function,
    ) -> PResult<(OpKind, Vec<Value>, Vec<Type>, Vec<Block>)> {
        let before = f.new_block(Vec::new());
        let mut operands = Vec::new();
        self.expect("(")?;
        if !self.eat(")") {
            loop {
                self.block_arg(f, before)?;
                self.expect("=")?;
                operands.push(self.value_use()?);
                if self.eat(")") {
                    break;
                }
                if !self.eat(",") {
                    return Err(self.expected("',' or ')'"));
                }
            }
        }
        let result_types = self.arrow_results()?;
        self.expect("{")?;
        self.block_ops(f, before)?;
        self.expect_kw("do")?;
        let after = f.new_block(Vec::new());
        if self.eat("(") && !self.eat(")") {
            loop {
                self.block_arg(f, after)?;
                if self.eat(")") {
                    break;
                }
                if !self.eat(",") {
                    return Err(self.expected("',' or ')'"));
                }
            }
        }
        self.expect("{")?;
        self.block_ops(f, after)?;
        Ok((OpKind::While, operands, result_types, vec![before, after]))
    }

    /// `ws { partition ROLE (num_warps = N[, regs = R]) { ops } ... }`.
    #[allow(clippy::type_complexity)]
    fn ws_op(&mut self, f: &mut Function) -> PResult<(OpKind, Vec<Value>, Vec<Type>, Vec<Block>)> {
        self.expect("{")?;
        let mut partitions = Vec::new();
        let mut regions = Vec::new();
        loop {
            if self.eat("}") {
                break;
            }
            self.ws();
            let pos = self.pos;
            if !self.eat_kw("partition") {
                return Err(self.expected("'partition' or '}'"));
            }
            let role = self.name_or_string("a partition role")?;
            let mut a = self.attr_items("(", ")")?;
            let num_warps = a.require_u32(self, "num_warps", pos)?;
            let regs = a.take_u32(self, "regs")?;
            a.finish(self, "a partition")?;
            self.expect("{")?;
            let block = f.new_block(Vec::new());
            self.block_ops(f, block)?;
            partitions.push(Partition {
                role,
                num_warps,
                regs,
            });
            regions.push(block);
        }
        Ok((
            OpKind::WarpSpecialize { partitions },
            Vec::new(),
            Vec::new(),
            regions,
        ))
    }

    /// A region-free op after its name: `[extra] operands {attrs} : types`.
    fn plain_op(
        &mut self,
        f: &mut Function,
        mnemonic: &str,
        op_pos: usize,
    ) -> PResult<(OpKind, Vec<Value>, Vec<Type>)> {
        let (base, sub) = match mnemonic.split_once('.') {
            Some((b, s)) => (b, Some(s)),
            None => (mnemonic, None),
        };
        let unknown = |p: &Self| p.err_at(op_pos, format!("unknown op '{mnemonic}'"));
        // Parts written before the operands.
        let mut constant = None;
        let mut axis = None;
        match base {
            "constant" => constant = Some(self.const_value()?),
            "program_id" | "num_programs" => {
                self.ws();
                let pos = self.pos;
                let w = self.word("an axis (x, y or z)")?;
                axis = Some(match w.as_str() {
                    "x" => Axis::X,
                    "y" => Axis::Y,
                    "z" => Axis::Z,
                    _ => return Err(self.err_at(pos, format!("unknown axis '{w}'"))),
                });
            }
            _ => {}
        }
        let mut operands = Vec::new();
        self.ws_inline();
        if self.peek() == Some('%') {
            loop {
                operands.push(self.value_use()?);
                if !self.eat(",") {
                    break;
                }
            }
        }
        self.ws();
        let mut a = if self.peek() == Some('{') {
            self.attr_dict()?
        } else {
            Attrs { items: Vec::new() }
        };
        let mut result_types = Vec::new();
        if self.eat(":") {
            let types_pos = self.pos;
            let first = self.type_list()?;
            if self.eat("->") {
                let operand_types: Vec<&Type> = operands.iter().map(|&v| f.ty(v)).collect();
                if operand_types.len() != first.len()
                    || operand_types.iter().zip(&first).any(|(a, b)| *a != b)
                {
                    let actual: Vec<String> = operand_types.iter().map(|t| t.to_string()).collect();
                    return Err(self.err_at(
                        types_pos,
                        format!(
                            "operand types written as ({}) but the operands have ({})",
                            first
                                .iter()
                                .map(|t| t.to_string())
                                .collect::<Vec<_>>()
                                .join(", "),
                            actual.join(", ")
                        ),
                    ));
                }
                result_types = self.type_list()?;
            } else {
                result_types = first;
            }
        }
        let what = format!("'{mnemonic}'");
        let no_sub = |p: &Self, k: OpKind| {
            if sub.is_some() {
                Err(unknown(p))
            } else {
                Ok(k)
            }
        };
        let kind = match base {
            "constant" => no_sub(
                self,
                OpKind::Constant(constant.unwrap_or(ConstValue::Int(0))),
            )?,
            "program_id" => no_sub(self, OpKind::ProgramId(axis.unwrap_or(Axis::X)))?,
            "num_programs" => no_sub(self, OpKind::NumPrograms(axis.unwrap_or(Axis::X)))?,
            "make_range" => {
                let start = a.require_i32(self, "start", op_pos)?;
                let end = a.require_i32(self, "end", op_pos)?;
                no_sub(self, OpKind::MakeRange { start, end })?
            }
            "splat" => no_sub(self, OpKind::Splat)?,
            "broadcast" => no_sub(self, OpKind::Broadcast)?,
            "expand_dims" => {
                let axis = a.require_u32(self, "axis", op_pos)?;
                no_sub(self, OpKind::ExpandDims { axis })?
            }
            "reshape" => no_sub(self, OpKind::Reshape)?,
            "trans" => {
                let perm = a.take_list(self, "perm")?.unwrap_or_default();
                no_sub(self, OpKind::Trans { perm })?
            }
            "join" => no_sub(self, OpKind::Join)?,
            "split" => no_sub(self, OpKind::Split)?,
            "fma" => no_sub(self, OpKind::Fma)?,
            "cmp" => {
                let pred = sub
                    .and_then(|s| CmpPred::ALL.into_iter().find(|p| p.name() == s))
                    .ok_or_else(|| unknown(self))?;
                OpKind::Cmp(pred)
            }
            "select" => no_sub(self, OpKind::Select)?,
            "cast" => {
                let rounding = a
                    .take_enum(self, "rounding", &[Rounding::Rtne, Rounding::Rtz], |r| {
                        printer::rounding_name(*r)
                    })?
                    .unwrap_or_default();
                no_sub(self, OpKind::Cast { rounding })?
            }
            "bitcast" => no_sub(self, OpKind::Bitcast)?,
            "addptr" => no_sub(self, OpKind::AddPtr)?,
            "load" => {
                let has_mask = a.take_flag(self, "mask")?;
                let has_other = a.take_flag(self, "other")?;
                let boundary_check = a.take_list(self, "boundary_check")?.unwrap_or_default();
                let padding = a
                    .take_enum(
                        self,
                        "padding",
                        &[Padding::None, Padding::Zero, Padding::Nan],
                        |p| printer::padding_name(*p),
                    )?
                    .unwrap_or_default();
                let (cache, evict) = a.take_mem(self)?;
                let volatile = a.take_flag(self, "volatile")?;
                no_sub(
                    self,
                    OpKind::Load {
                        has_mask,
                        has_other,
                        boundary_check,
                        padding,
                        cache,
                        evict,
                        volatile,
                    },
                )?
            }
            "store" => {
                let has_mask = a.take_flag(self, "mask")?;
                let boundary_check = a.take_list(self, "boundary_check")?.unwrap_or_default();
                let (cache, evict) = a.take_mem(self)?;
                no_sub(
                    self,
                    OpKind::Store {
                        has_mask,
                        boundary_check,
                        cache,
                        evict,
                    },
                )?
            }
            "dot" => {
                let input_precision = a
                    .take_enum(
                        self,
                        "input_precision",
                        &[
                            InputPrecision::Tf32,
                            InputPrecision::Tf32x3,
                            InputPrecision::Ieee,
                        ],
                        |p| printer::precision_name(*p),
                    )?
                    .unwrap_or_default();
                let max_num_imprecise_acc = a.take_u32(self, "max_num_imprecise_acc")?;
                let is_async = a.take_flag(self, "async")?;
                no_sub(
                    self,
                    OpKind::Dot {
                        input_precision,
                        max_num_imprecise_acc,
                        is_async,
                    },
                )?
            }
            "dot_wait" => {
                let pending = a.require_u32(self, "pending", op_pos)?;
                no_sub(self, OpKind::DotWait { pending })?
            }
            "reduce" => {
                let kind = sub
                    .and_then(|s| ReduceKind::ALL.into_iter().find(|k| k.name() == s))
                    .ok_or_else(|| unknown(self))?;
                let axis = a.require_u32(self, "axis", op_pos)?;
                OpKind::Reduce { kind, axis }
            }
            "scan" => {
                let kind = match sub {
                    Some("sum") => ScanKind::Sum,
                    Some("prod") => ScanKind::Prod,
                    _ => return Err(unknown(self)),
                };
                let axis = a.require_u32(self, "axis", op_pos)?;
                let reverse = a.take_flag(self, "reverse")?;
                OpKind::Scan {
                    kind,
                    axis,
                    reverse,
                }
            }
            "make_block_ptr" => {
                let order = a.take_list(self, "order")?.unwrap_or_default();
                no_sub(self, OpKind::MakeBlockPtr { order })?
            }
            "advance" => no_sub(self, OpKind::Advance)?,
            "make_tensor_desc" => no_sub(self, OpKind::MakeTensorDesc)?,
            "desc_load" => {
                if sub.is_some() {
                    return Err(unknown(self));
                }
                let read_once = match a.take_list(self, "read_once")? {
                    None => None,
                    Some(axes) => {
                        let mut listed = Vec::new();
                        for i in axes {
                            listed.push(Axis::from_index(i.into()).ok_or_else(|| {
                                self.err_at(
                                    op_pos,
                                    format!("'read_once' lists grid axes 0, 1 or 2, found {i}"),
                                )
                            })?);
                        }
                        Some(listed)
                    }
                };
                OpKind::DescLoad { read_once }
            }
            "desc_store" => no_sub(self, OpKind::DescStore)?,
            "atomic_rmw" => {
                let op = sub
                    .and_then(|s| AtomicOp::ALL.into_iter().find(|k| k.name() == s))
                    .ok_or_else(|| unknown(self))?;
                let has_mask = a.take_flag(self, "mask")?;
                let (sem, scope) = a.take_atomic(self)?;
                OpKind::AtomicRmw {
                    op,
                    sem,
                    scope,
                    has_mask,
                }
            }
            "atomic_cas" => {
                let (sem, scope) = a.take_atomic(self)?;
                no_sub(self, OpKind::AtomicCas { sem, scope })?
            }
            "hint" => {
                let multiple_of = a.take_list(self, "multiple_of")?.unwrap_or_default();
                let max_contiguous = a.take_list(self, "max_contiguous")?.unwrap_or_default();
                let max_constancy = a.take_list(self, "max_constancy")?.unwrap_or_default();
                no_sub(
                    self,
                    OpKind::Hint {
                        multiple_of,
                        max_contiguous,
                        max_constancy,
                    },
                )?
            }
            "yield" => no_sub(self, OpKind::Yield)?,
            "condition" => no_sub(self, OpKind::Condition)?,
            "return" => no_sub(self, OpKind::Return)?,
            "aref" => match sub {
                Some("create") => OpKind::ArefCreate,
                Some("put") => OpKind::ArefPut,
                Some("get") => OpKind::ArefGet,
                Some("consumed") => OpKind::ArefConsumed,
                _ => return Err(unknown(self)),
            },
            "debug_barrier" => no_sub(self, OpKind::DebugBarrier)?,
            "turn" => match sub {
                Some("take") => OpKind::TurnTake,
                Some("pass") => OpKind::TurnPass,
                _ => return Err(unknown(self)),
            },
            "cluster" => match sub {
                Some("sum") => OpKind::ClusterSum,
                _ => return Err(unknown(self)),
            },
            "stream_k" => match sub {
                Some("put") => OpKind::StreamKPut,
                Some("take") => OpKind::StreamKTake,
                _ => return Err(unknown(self)),
            },
            "print" => {
                let prefix = a.take_str(self, "prefix")?.unwrap_or_default();
                let hex = a.take_flag(self, "hex")?;
                no_sub(self, OpKind::Print { prefix, hex })?
            }
            "assert" => {
                let message = a.take_str(self, "message")?.unwrap_or_default();
                no_sub(self, OpKind::Assert { message })?
            }
            _ => {
                if let Some(b) = BinaryOp::ALL.into_iter().find(|b| b.name() == base) {
                    no_sub(self, OpKind::Binary(b))?
                } else if let Some(u) = UnaryOp::ALL.into_iter().find(|u| u.name() == base) {
                    no_sub(self, OpKind::Unary(u))?
                } else {
                    return Err(unknown(self));
                }
            }
        };
        a.finish(self, &what)?;
        Ok((kind, operands, result_types))
    }

    /// `42`, `-3`, `true`, `1.5`, `1e-30`, `-0.0`, `inf`, `-inf`, `nan`,
    /// `nan(0x7ff8000000000001)`.
    fn const_value(&mut self) -> PResult<ConstValue> {
        self.ws();
        let start = self.pos;
        if self.eat_kw("true") {
            return Ok(ConstValue::Bool(true));
        }
        if self.eat_kw("false") {
            return Ok(ConstValue::Bool(false));
        }
        if self.eat_kw("nan") {
            if self.rest().starts_with('(') {
                self.pos += 1;
                self.ws();
                let rest = self.rest();
                let bits = rest
                    .strip_prefix("0x")
                    .and_then(|r| {
                        let len = r.find(|c: char| !c.is_ascii_hexdigit()).unwrap_or(r.len());
                        u64::from_str_radix(&r[..len], 16)
                            .ok()
                            .map(|b| (b, len + 2))
                    })
                    .filter(|(b, _)| f64::from_bits(*b).is_nan());
                let Some((bits, len)) = bits else {
                    return Err(self.err("expected the hex bits of a NaN (0x...)"));
                };
                self.pos += len;
                self.expect(")")?;
                return Ok(ConstValue::Float(f64::from_bits(bits)));
            }
            return Ok(ConstValue::Float(f64::NAN));
        }
        let rest = self.rest();
        let len = rest
            .find(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '-' | '+' | '.')))
            .unwrap_or(rest.len());
        let text = &rest[..len];
        if text.is_empty() {
            return Err(self.expected("a constant"));
        }
        let is_float = text.contains(['.', 'e', 'E']) || text.ends_with("inf");
        let value = if is_float {
            // Rust's float parser accepts words like "infinity" too; accept only
            // what the printer writes.
            let ok_chars = text == "inf"
                || text == "-inf"
                || text
                    .chars()
                    .all(|c| c.is_ascii_digit() || matches!(c, '-' | '+' | '.' | 'e' | 'E'));
            text.parse::<f64>()
                .ok()
                .filter(|_| ok_chars)
                .map(ConstValue::Float)
        } else {
            text.parse::<i64>().ok().map(ConstValue::Int)
        };
        match value {
            Some(v) => {
                self.pos += len;
                Ok(v)
            }
            None => Err(self.err_at(start, format!("invalid constant '{text}'"))),
        }
    }
}

impl Attrs {
    fn take(&mut self, key: &str) -> Option<(AttrVal, usize)> {
        let i = self.items.iter().position(|(k, _, _)| k == key)?;
        let (_, v, pos) = self.items.remove(i);
        Some((v, pos))
    }

    fn take_flag(&mut self, p: &Parser, key: &str) -> PResult<bool> {
        match self.take(key) {
            None => Ok(false),
            Some((AttrVal::Flag, _)) => Ok(true),
            Some((_, pos)) => Err(p.err_at(pos, format!("'{key}' is a flag and takes no value"))),
        }
    }

    fn take_u32(&mut self, p: &Parser, key: &str) -> PResult<Option<u32>> {
        match self.take(key) {
            None => Ok(None),
            Some((AttrVal::Int(i), pos)) => u32::try_from(i).map(Some).map_err(|_| {
                p.err_at(
                    pos,
                    format!("'{key}' must be a non-negative 32-bit integer"),
                )
            }),
            Some((_, pos)) => Err(p.err_at(pos, format!("'{key}' must be an integer"))),
        }
    }

    fn require_u32(&mut self, p: &Parser, key: &str, op_pos: usize) -> PResult<u32> {
        self.take_u32(p, key)?
            .ok_or_else(|| p.err_at(op_pos, format!("missing attribute '{key}'")))
    }

    fn require_i32(&mut self, p: &Parser, key: &str, op_pos: usize) -> PResult<i32> {
        match self.take(key) {
            None => Err(p.err_at(op_pos, format!("missing attribute '{key}'"))),
            Some((AttrVal::Int(i), pos)) => i32::try_from(i)
                .map_err(|_| p.err_at(pos, format!("'{key}' must be a 32-bit integer"))),
            Some((_, pos)) => Err(p.err_at(pos, format!("'{key}' must be an integer"))),
        }
    }

    fn take_list(&mut self, p: &Parser, key: &str) -> PResult<Option<Vec<u32>>> {
        match self.take(key) {
            None => Ok(None),
            Some((AttrVal::List(xs), pos)) => xs
                .into_iter()
                .map(|x| {
                    u32::try_from(x)
                        .map_err(|_| p.err_at(pos, format!("'{key}' entries must be u32")))
                })
                .collect::<PResult<Vec<u32>>>()
                .map(Some),
            Some((_, pos)) => Err(p.err_at(pos, format!("'{key}' must be a list like [0, 1]"))),
        }
    }

    fn take_str(&mut self, p: &Parser, key: &str) -> PResult<Option<String>> {
        match self.take(key) {
            None => Ok(None),
            Some((AttrVal::Str(s), _)) => Ok(Some(s)),
            Some((_, pos)) => Err(p.err_at(pos, format!("'{key}' must be a string"))),
        }
    }

    fn take_dict(&mut self, p: &Parser, key: &str) -> PResult<Option<Vec<(String, String)>>> {
        match self.take(key) {
            None => Ok(None),
            Some((AttrVal::Dict(kv), _)) => Ok(Some(kv)),
            Some((_, pos)) => Err(p.err_at(pos, format!("'{key}' must be a dictionary"))),
        }
    }

    fn take_enum<T: Copy>(
        &mut self,
        p: &Parser,
        key: &str,
        all: &[T],
        name: impl Fn(&T) -> &'static str,
    ) -> PResult<Option<T>> {
        match self.take(key) {
            None => Ok(None),
            Some((AttrVal::Word(w), pos)) => all
                .iter()
                .find(|t| name(t) == w)
                .copied()
                .map(Some)
                .ok_or_else(|| {
                    let names: Vec<&str> = all.iter().map(&name).collect();
                    p.err_at(
                        pos,
                        format!("'{key}' must be one of {}, found '{w}'", names.join(", ")),
                    )
                }),
            Some((_, pos)) => Err(p.err_at(pos, format!("'{key}' must be a word"))),
        }
    }

    fn take_mem(&mut self, p: &Parser) -> PResult<(CacheModifier, EvictionPolicy)> {
        use CacheModifier as C;
        use EvictionPolicy as E;
        let cache = self
            .take_enum(
                p,
                "cache",
                &[C::None, C::Ca, C::Cg, C::Cs, C::Wb, C::Wt, C::Cv],
                |c| printer::cache_name(*c),
            )?
            .unwrap_or_default();
        let evict = self
            .take_enum(p, "evict", &[E::Normal, E::EvictFirst, E::EvictLast], |e| {
                printer::evict_name(*e)
            })?
            .unwrap_or_default();
        Ok((cache, evict))
    }

    fn take_atomic(&mut self, p: &Parser) -> PResult<(MemSem, MemScope)> {
        use MemScope as Sc;
        use MemSem as S;
        let sem = self
            .take_enum(
                p,
                "sem",
                &[S::Relaxed, S::Acquire, S::Release, S::AcqRel],
                |s| printer::sem_name(*s),
            )?
            .unwrap_or_default();
        let scope = self
            .take_enum(p, "scope", &[Sc::Gpu, Sc::Cta, Sc::Sys], |s| {
                printer::scope_name(*s)
            })?
            .unwrap_or_default();
        Ok((sem, scope))
    }

    /// Errors on the first attribute nobody took.
    fn finish(self, p: &Parser, what: &str) -> PResult<()> {
        match self.items.into_iter().next() {
            None => Ok(()),
            Some((k, _, pos)) => Err(p.err_at(pos, format!("unknown attribute '{k}' for {what}"))),
        }
    }
}
