//! The subset of Python's syntax tree the frontend works on, with byte spans.
//!
//! Converted from tree-sitter's concrete tree by [`crate::parse`]. Host code
//! around the kernels (classes, `with`, comprehensions, ...) is kept as
//! [`StmtKind::Unsupported`] / [`ExprKind::Unsupported`] rather than
//! rejected: only what a `@triton.jit` function reaches must be valid Triton.

use std::rc::Rc;

use crate::diagnostics::Span;

#[derive(Debug)]
pub struct Module {
    pub body: Vec<Stmt>,
}

#[derive(Debug)]
pub struct FunctionDef {
    pub name: String,
    pub name_span: Span,
    pub params: Vec<Param>,
    pub body: Vec<Stmt>,
    pub decorators: Vec<Expr>,
    pub span: Span,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ParamKind {
    Normal,
    /// `*args`
    VarArgs,
    /// `**kwargs`
    KwArgs,
}

#[derive(Debug)]
pub struct Param {
    pub name: String,
    pub span: Span,
    pub annotation: Option<Expr>,
    pub default: Option<Expr>,
    pub kind: ParamKind,
}

#[derive(Debug)]
pub struct Stmt {
    pub kind: StmtKind,
    pub span: Span,
}

#[derive(Debug)]
pub enum StmtKind {
    Expr(Expr),
    /// `a = b = value`: targets in source order.
    Assign {
        targets: Vec<Expr>,
        value: Expr,
    },
    AugAssign {
        target: Expr,
        op: BinOpKind,
        value: Expr,
    },
    /// `x: T = value` (value optional).
    AnnAssign {
        target: Expr,
        annotation: Expr,
        value: Option<Expr>,
    },
    /// `elif` chains are nested `If`s in `orelse`.
    If {
        cond: Expr,
        body: Vec<Stmt>,
        orelse: Vec<Stmt>,
    },
    For {
        target: Expr,
        iter: Expr,
        body: Vec<Stmt>,
        orelse: Vec<Stmt>,
    },
    While {
        cond: Expr,
        body: Vec<Stmt>,
        orelse: Vec<Stmt>,
    },
    Return(Option<Expr>),
    Pass,
    Break,
    Continue,
    Assert {
        test: Expr,
        msg: Option<Expr>,
    },
    FunctionDef(Rc<FunctionDef>),
    /// `import a.b as c`: (module path, alias).
    Import(Vec<(String, Option<String>)>),
    /// `from a.b import c as d`: module path and (name, alias) pairs.
    ImportFrom {
        module: String,
        names: Vec<(String, Option<String>)>,
    },
    /// A statement kind Triton kernels cannot contain (`with`, `try`, ...);
    /// the string names it for the diagnostic.
    Unsupported(String),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BinOpKind {
    Add,
    Sub,
    Mul,
    Div,
    FloorDiv,
    Mod,
    Pow,
    MatMul,
    BitAnd,
    BitOr,
    BitXor,
    LShift,
    RShift,
}

impl BinOpKind {
    pub fn symbol(self) -> &'static str {
        match self {
            BinOpKind::Add => "+",
            BinOpKind::Sub => "-",
            BinOpKind::Mul => "*",
            BinOpKind::Div => "/",
            BinOpKind::FloorDiv => "//",
            BinOpKind::Mod => "%",
            BinOpKind::Pow => "**",
            BinOpKind::MatMul => "@",
            BinOpKind::BitAnd => "&",
            BinOpKind::BitOr => "|",
            BinOpKind::BitXor => "^",
            BinOpKind::LShift => "<<",
            BinOpKind::RShift => ">>",
        }
    }

    pub fn from_symbol(s: &str) -> Option<BinOpKind> {
        Some(match s.trim_end_matches('=') {
            "+" => BinOpKind::Add,
            "-" => BinOpKind::Sub,
            "*" => BinOpKind::Mul,
            "/" => BinOpKind::Div,
            "//" => BinOpKind::FloorDiv,
            "%" => BinOpKind::Mod,
            "**" => BinOpKind::Pow,
            "@" => BinOpKind::MatMul,
            "&" => BinOpKind::BitAnd,
            "|" => BinOpKind::BitOr,
            "^" => BinOpKind::BitXor,
            "<<" => BinOpKind::LShift,
            ">>" => BinOpKind::RShift,
            _ => return None,
        })
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UnaryOpKind {
    Neg,
    Pos,
    Not,
    Invert,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CmpOpKind {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    Is,
    IsNot,
    In,
    NotIn,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BoolOpKind {
    And,
    Or,
}

#[derive(Debug, Clone)]
pub struct Keyword {
    pub name: String,
    pub name_span: Span,
    pub value: Expr,
}

#[derive(Debug, Clone)]
pub struct Expr {
    pub kind: ExprKind,
    pub span: Span,
}

#[derive(Debug, Clone)]
pub enum ExprKind {
    Name(String),
    Int(i128),
    Float(f64),
    Str(String),
    Bool(bool),
    None,
    Attribute {
        value: Box<Expr>,
        attr: String,
        attr_span: Span,
    },
    Call {
        func: Box<Expr>,
        args: Vec<Expr>,
        keywords: Vec<Keyword>,
    },
    BinOp {
        op: BinOpKind,
        left: Box<Expr>,
        right: Box<Expr>,
    },
    UnaryOp {
        op: UnaryOpKind,
        operand: Box<Expr>,
    },
    BoolOp {
        op: BoolOpKind,
        left: Box<Expr>,
        right: Box<Expr>,
    },
    /// `a < b <= c`: the left operand and each (op, right operand).
    Compare {
        left: Box<Expr>,
        rest: Vec<(CmpOpKind, Expr)>,
    },
    IfExp {
        cond: Box<Expr>,
        body: Box<Expr>,
        orelse: Box<Expr>,
    },
    /// `x[i, :, None]`: one entry per index item.
    Subscript {
        value: Box<Expr>,
        index: Vec<Expr>,
    },
    /// `lo:hi:step` inside a subscript.
    Slice {
        lower: Option<Box<Expr>>,
        upper: Option<Box<Expr>>,
        step: Option<Box<Expr>>,
    },
    Tuple(Vec<Expr>),
    List(Vec<Expr>),
    /// `*x` in a call or tuple.
    Starred(Box<Expr>),
    /// An expression kind kernels cannot contain (lambda, dict, ...).
    Unsupported(String),
}
