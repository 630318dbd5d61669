//! What a Python name or expression evaluates to while lowering: an IR
//! value, or one of the compile-time things Triton code manipulates
//! (constexprs, dtypes, tuples, modules, functions).

use std::rc::Rc;

use tawa_ir::{Elem, ScalarType, Value};

use crate::ast::FunctionDef;
use crate::diagnostics::Span;

/// A compile-time Python value (`tl.constexpr`).
#[derive(Clone, Debug, PartialEq)]
pub enum Const {
    Int(i128),
    Float(f64),
    Bool(bool),
    Str(String),
    None,
}

impl Const {
    /// Python's `repr`, used for constexpr attributes and messages.
    pub fn repr(&self) -> String {
        match self {
            Const::Int(i) => i.to_string(),
            Const::Float(f) => python_float_repr(*f),
            Const::Bool(b) => if *b { "True" } else { "False" }.to_string(),
            Const::Str(s) => format!("'{}'", s.replace('\\', "\\\\").replace('\'', "\\'")),
            Const::None => "None".to_string(),
        }
    }

    /// Python truthiness.
    pub fn truthy(&self) -> bool {
        match self {
            Const::Int(i) => *i != 0,
            Const::Float(f) => *f != 0.0,
            Const::Bool(b) => *b,
            Const::Str(s) => !s.is_empty(),
            Const::None => false,
        }
    }

    pub fn as_int(&self) -> Option<i128> {
        match self {
            Const::Int(i) => Some(*i),
            Const::Bool(b) => Some(*b as i128),
            _ => None,
        }
    }

    pub fn as_float(&self) -> Option<f64> {
        match self {
            Const::Int(i) => Some(*i as f64),
            Const::Bool(b) => Some(*b as i64 as f64),
            Const::Float(f) => Some(*f),
            _ => None,
        }
    }

    pub fn type_name(&self) -> &'static str {
        match self {
            Const::Int(_) => "int",
            Const::Float(_) => "float",
            Const::Bool(_) => "bool",
            Const::Str(_) => "str",
            Const::None => "None",
        }
    }
}

pub fn python_float_repr(f: f64) -> String {
    if f.is_nan() {
        "float('nan')".into()
    } else if f.is_infinite() {
        if f > 0.0 {
            "float('inf')"
        } else {
            "float('-inf')"
        }
        .into()
    } else if f == f.trunc() && f.abs() < 1e16 {
        format!("{f:.1}")
    } else {
        format!("{f:?}")
    }
}

/// Modules a kernel file can name (after `import ... as ...`).
#[derive(Clone, Debug, PartialEq)]
pub enum ModuleRef {
    Triton,
    /// `triton.language`
    Tl,
    /// `triton.language.math`
    Math,
    /// `triton.language.extra`
    Extra,
    /// `triton.language.extra.cuda`
    ExtraCuda,
    /// `triton.language.extra.{cuda.}libdevice`
    Libdevice,
    /// `triton.language.core` and friends: same names as `tl`.
    TlCore,
    /// Anything else (`torch`, `os`, ...): host-only.
    Other(String),
}

impl ModuleRef {
    pub fn from_path(path: &str) -> ModuleRef {
        // The `tawa` Python package is a drop-in for `triton`
        // (`import tawa.language as tl`): its modules are Triton's.
        let renamed;
        let path = match path.strip_prefix("tawa") {
            Some(rest) if rest.is_empty() || rest.starts_with('.') => {
                renamed = format!("triton{rest}");
                renamed.as_str()
            }
            _ => path,
        };
        match path {
            "triton" => ModuleRef::Triton,
            "triton.language" => ModuleRef::Tl,
            "triton.language.math" => ModuleRef::Math,
            "triton.language.core" | "triton.language.standard" => ModuleRef::TlCore,
            "triton.language.extra" => ModuleRef::Extra,
            "triton.language.extra.cuda" => ModuleRef::ExtraCuda,
            "triton.language.extra.libdevice" | "triton.language.extra.cuda.libdevice" => {
                ModuleRef::Libdevice
            }
            other => ModuleRef::Other(other.to_string()),
        }
    }

    pub fn path(&self) -> String {
        match self {
            ModuleRef::Triton => "triton".into(),
            ModuleRef::Tl => "triton.language".into(),
            ModuleRef::Math => "triton.language.math".into(),
            ModuleRef::TlCore => "triton.language.core".into(),
            ModuleRef::Extra => "triton.language.extra".into(),
            ModuleRef::ExtraCuda => "triton.language.extra.cuda".into(),
            ModuleRef::Libdevice => "triton.language.extra.libdevice".into(),
            ModuleRef::Other(p) => p.clone(),
        }
    }
}

/// Classes usable with `isinstance` and as annotations.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Class {
    Constexpr,
    Tensor,
    TensorDescriptor,
    Int,
    Float,
    Bool,
    Str,
    Tuple,
    Dtype,
}

#[derive(Clone, Debug)]
pub enum Val {
    /// A runtime value: scalar, tile, pointer, block pointer or descriptor.
    Ir(Value),
    Const(Const),
    Tuple(Vec<Val>),
    Dtype(Elem),
    Module(ModuleRef),
    /// A `@triton.jit` function (inlined when called).
    JitFn(Rc<FunctionDef>),
    /// A plain Python function (cannot be called from a kernel).
    PyFn(Rc<FunctionDef>),
    /// A builtin by its canonical name (`tl.load`, `min`, `libdevice.tanh`).
    Builtin(String),
    /// `recv.name` for a method call (`x.to`, `desc.load`).
    Method(Box<Val>, String),
    Class(Class),
    /// A name that exists but has no usable value here (assigned in only
    /// one branch, or only inside a loop); the text says why.
    Undefined(String),
}

impl Val {
    pub fn int(i: i128) -> Val {
        Val::Const(Const::Int(i))
    }

    pub fn same(&self, other: &Val) -> bool {
        match (self, other) {
            (Val::Ir(a), Val::Ir(b)) => a == b,
            (Val::Const(a), Val::Const(b)) => a == b,
            (Val::Tuple(a), Val::Tuple(b)) => {
                a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.same(y))
            }
            (Val::Dtype(a), Val::Dtype(b)) => a == b,
            (Val::Module(a), Val::Module(b)) => a == b,
            (Val::JitFn(a), Val::JitFn(b)) | (Val::PyFn(a), Val::PyFn(b)) => Rc::ptr_eq(a, b),
            (Val::Builtin(a), Val::Builtin(b)) => a == b,
            (Val::Class(a), Val::Class(b)) => a == b,
            (Val::Undefined(a), Val::Undefined(b)) => a == b,
            _ => false,
        }
    }
}

/// An evaluated call argument with the span of its expression.
#[derive(Clone, Debug)]
pub struct Arg {
    pub val: Val,
    pub span: Span,
}

/// Triton's dtype name (`tl.float16` → `float16`) for messages.
pub fn dtype_name(e: Elem) -> String {
    match e {
        Elem::Scalar(s) => tl_name(s).to_string(),
        Elem::Ptr(s) => format!("pointer<{}>", tl_name(s)),
    }
}

pub fn tl_name(s: ScalarType) -> &'static str {
    match s {
        ScalarType::I1 => "int1",
        ScalarType::I8 => "int8",
        ScalarType::I16 => "int16",
        ScalarType::I32 => "int32",
        ScalarType::I64 => "int64",
        ScalarType::U8 => "uint8",
        ScalarType::U16 => "uint16",
        ScalarType::U32 => "uint32",
        ScalarType::U64 => "uint64",
        ScalarType::F8E4M3 => "float8e4nv",
        ScalarType::F8E5M2 => "float8e5",
        ScalarType::F16 => "float16",
        ScalarType::BF16 => "bfloat16",
        ScalarType::F32 => "float32",
        ScalarType::F64 => "float64",
    }
}

/// `tl.<name>` dtypes (the inverse of [`tl_name`]).
pub fn dtype_by_tl_name(name: &str) -> Option<ScalarType> {
    ScalarType::ALL.into_iter().find(|&s| tl_name(s) == name)
}
