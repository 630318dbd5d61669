//! Triton's ahead-of-time signature strings: one comma-separated entry per
//! kernel parameter, e.g. `"*fp16:16, *fp16:16, i32:16, i32, 64, 'relu'"`.
//!
//! - `*T` / `*T:A`: pointer to `T`, optionally aligned to `A` bytes;
//! - `T` / `T:D`: a scalar of type `T` (`i32`, `i64`, `fp32`, ...), `D` a
//!   divisibility hint for integers — except `:1`, which in Triton's format
//!   means "equal to 1": the parameter becomes the constant 1, as Triton
//!   specializes unit strides;
//! - `tensordesc<T[B0, B1]>`: a host-side tensor descriptor moving `B0xB1`
//!   blocks of `T` (Triton's spelling for `TensorDescriptor` arguments);
//! - anything else is a Python expression binding a `tl.constexpr`
//!   parameter (`64`, `'leaky_relu'`, `True`, `tl.float16`).

use tawa_ir::ScalarType;

#[derive(Clone, Debug, PartialEq)]
pub enum SigEntry {
    Ptr {
        pointee: ScalarType,
        align: Option<u32>,
    },
    Scalar {
        ty: ScalarType,
        divisibility: Option<u32>,
    },
    Desc {
        elem: ScalarType,
        block: Vec<u32>,
    },
    /// A constexpr value, as Python source text.
    Value(String),
}

/// One entry with its text, for messages.
#[derive(Clone, Debug)]
pub struct SigItem {
    pub text: String,
    pub entry: Result<SigEntry, String>,
}

/// Splits at top-level commas (not inside brackets or quotes).
pub fn split(sig: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut depth = 0i32;
    let mut quote: Option<char> = None;
    let mut cur = String::new();
    for c in sig.chars() {
        if let Some(q) = quote {
            if c == q {
                quote = None;
            }
            cur.push(c);
            continue;
        }
        match c {
            '\'' | '"' => {
                quote = Some(c);
                cur.push(c);
            }
            '[' | '(' | '<' => {
                depth += 1;
                cur.push(c);
            }
            ']' | ')' | '>' => {
                depth -= 1;
                cur.push(c);
            }
            ',' if depth <= 0 => out.push(std::mem::take(&mut cur)),
            _ => cur.push(c),
        }
    }
    if !cur.trim().is_empty() || !out.is_empty() {
        out.push(cur);
    }
    out.into_iter().map(|s| s.trim().to_string()).collect()
}

pub fn parse(sig: &str) -> Vec<SigItem> {
    split(sig)
        .into_iter()
        .map(|text| SigItem {
            entry: parse_entry(&text),
            text,
        })
        .collect()
}

/// Signature type names: Triton's (`fp16`, `i32`, `fp8e4nv`) and ours.
fn sig_type(s: &str) -> Option<ScalarType> {
    match s {
        "fp8e4b15" | "fp8e4b8" | "fp8e5b16" => None,
        other => ScalarType::parse(other),
    }
}

fn parse_hint(s: &str) -> Result<u32, String> {
    s.trim()
        .parse::<u32>()
        .ok()
        .filter(|v| v.is_power_of_two())
        .ok_or_else(|| format!("`{s}` is not a power-of-two alignment/divisibility hint"))
}

pub fn parse_entry(text: &str) -> Result<SigEntry, String> {
    let t = text.trim();
    if t.is_empty() {
        return Err("empty signature entry".into());
    }
    if let Some(rest) = t.strip_prefix('*') {
        let (ty, hint) = match rest.split_once(':') {
            Some((a, b)) => (a.trim(), Some(parse_hint(b)?)),
            None => (rest.trim(), None),
        };
        let pointee = sig_type(ty).ok_or_else(|| {
            format!("unknown pointee type `{ty}` (expected one of fp16, bf16, fp32, fp64, fp8e4nv, fp8e5, i1, i8, i16, i32, i64, u8, u16, u32, u64)")
        })?;
        return Ok(SigEntry::Ptr {
            pointee,
            align: hint,
        });
    }
    if let Some(rest) = t.strip_prefix("tensordesc<") {
        let inner = rest
            .strip_suffix('>')
            .ok_or("malformed tensor descriptor: expected `tensordesc<fp16[64, 64]>`")?;
        let (ty, dims) = inner
            .split_once('[')
            .ok_or("malformed tensor descriptor: expected `tensordesc<fp16[64, 64]>`")?;
        let dims = dims
            .strip_suffix(']')
            .ok_or("malformed tensor descriptor: expected `tensordesc<fp16[64, 64]>`")?;
        let elem =
            sig_type(ty.trim()).ok_or_else(|| format!("unknown element type `{}`", ty.trim()))?;
        let block = dims
            .split(',')
            .map(|d| {
                d.trim()
                    .parse::<u32>()
                    .map_err(|_| format!("bad block dimension `{}`", d.trim()))
            })
            .collect::<Result<Vec<_>, _>>()?;
        if block.is_empty() || block.len() > 5 {
            return Err("a tensor descriptor has 1 to 5 block dimensions".into());
        }
        return Ok(SigEntry::Desc { elem, block });
    }
    let (head, hint) = match t.split_once(':') {
        Some((a, b)) if sig_type(a.trim()).is_some() => (a.trim(), Some(parse_hint(b)?)),
        _ => (t, None),
    };
    if let Some(ty) = sig_type(head) {
        if ty.is_int() && hint == Some(1) {
            // Triton's `equal_to_1` specialization, not "divisible by 1".
            return Ok(SigEntry::Value("1".into()));
        }
        // `fp16`-style names are types here; a dtype constexpr value is
        // spelled `tl.float16`.
        return Ok(SigEntry::Scalar {
            ty,
            divisibility: hint,
        });
    }
    let looks_like_type = head.chars().all(|c| c.is_ascii_alphanumeric())
        && head.chars().next().is_some_and(|c| c.is_ascii_alphabetic())
        && head.chars().any(|c| c.is_ascii_digit())
        && !matches!(head, "True" | "False" | "None");
    if looks_like_type {
        return Err(format!(
            "unknown type `{head}` (expected a type such as i32, i64, fp32, or a pointer such as *fp16:16)"
        ));
    }
    Ok(SigEntry::Value(t.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries() {
        assert_eq!(
            parse_entry("*fp16:16"),
            Ok(SigEntry::Ptr {
                pointee: ScalarType::F16,
                align: Some(16)
            })
        );
        assert_eq!(
            parse_entry("i32"),
            Ok(SigEntry::Scalar {
                ty: ScalarType::I32,
                divisibility: None
            })
        );
        assert_eq!(
            parse_entry("tensordesc<fp16[64, 32]>"),
            Ok(SigEntry::Desc {
                elem: ScalarType::F16,
                block: vec![64, 32]
            })
        );
        assert_eq!(
            parse_entry("'leaky_relu'"),
            Ok(SigEntry::Value("'leaky_relu'".into()))
        );
        // A bare integer binds any parameter to a constant, also a plain
        // integer one (Triton's specialization of arguments equal to 1).
        assert_eq!(parse_entry("1"), Ok(SigEntry::Value("1".into())));
        // `i32:1` is Triton's "equal to 1", the same binding.
        assert_eq!(parse_entry("i32:1"), Ok(SigEntry::Value("1".into())));
        assert_eq!(parse_entry("i64 : 1"), Ok(SigEntry::Value("1".into())));
        assert_eq!(
            parse_entry("i32:2"),
            Ok(SigEntry::Scalar {
                ty: ScalarType::I32,
                divisibility: Some(2)
            })
        );
        assert!(parse_entry("*fp17").is_err());
        assert!(parse_entry("i33").is_err());
        assert_eq!(
            split("*fp16, tensordesc<fp16[64, 64]>, 'a,b', 3"),
            vec!["*fp16", "tensordesc<fp16[64, 64]>", "'a,b'", "3"]
        );
    }
}
