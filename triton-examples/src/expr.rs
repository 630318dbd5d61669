//! The size/grid expression language of launch cases: integers, names,
//! `+ - * // %`, unary minus, parentheses and the calls `cdiv(a, b)`,
//! `min(a, ...)`, `max(a, ...)`. `//` and `%` follow Python (floor division,
//! result of `%` has the divisor's sign) so that expressions copied from a
//! Triton launcher mean the same thing. Arithmetic is checked i64: overflow
//! and division by zero are errors, never wraps or panics.

/// Evaluates `src`, looking names up with `lookup`.
pub fn eval(src: &str, lookup: &dyn Fn(&str) -> Option<i64>) -> Result<i64, String> {
    let tokens = tokenize(src)?;
    let mut p = Parser {
        tokens: &tokens,
        pos: 0,
        lookup,
    };
    let v = p.expr()?;
    match p.tokens.get(p.pos) {
        None => Ok(v),
        Some(t) => Err(format!("unexpected `{}` in `{src}`", t.text())),
    }
}

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Int(i64),
    Name(String),
    Op(&'static str),
}

impl Tok {
    fn text(&self) -> String {
        match self {
            Tok::Int(v) => v.to_string(),
            Tok::Name(n) => n.clone(),
            Tok::Op(o) => o.to_string(),
        }
    }
}

fn tokenize(src: &str) -> Result<Vec<Tok>, String> {
    let chars: Vec<char> = src.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c.is_whitespace() {
            i += 1;
        } else if c.is_ascii_digit() {
            let start = i;
            while i < chars.len() && (chars[i].is_ascii_digit() || chars[i] == '_') {
                i += 1;
            }
            let text: String = chars[start..i].iter().filter(|c| **c != '_').collect();
            let v = text
                .parse::<i64>()
                .map_err(|_| format!("integer `{text}` out of range in `{src}`"))?;
            out.push(Tok::Int(v));
        } else if c.is_alphabetic() || c == '_' {
            let start = i;
            while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
            out.push(Tok::Name(chars[start..i].iter().collect()));
        } else {
            let op = match c {
                '/' if chars.get(i + 1) == Some(&'/') => "//",
                '*' if chars.get(i + 1) == Some(&'*') => "**",
                '+' => "+",
                '-' => "-",
                '*' => "*",
                '%' => "%",
                '(' => "(",
                ')' => ")",
                ',' => ",",
                '/' => return Err(format!("`/` in `{src}`: integer expressions use `//`")),
                _ => return Err(format!("unexpected character `{c}` in `{src}`")),
            };
            i += op.len();
            out.push(Tok::Op(op));
        }
    }
    Ok(out)
}

struct Parser<'a> {
    tokens: &'a [Tok],
    pos: usize,
    lookup: &'a dyn Fn(&str) -> Option<i64>,
}

impl Parser<'_> {
    fn peek_op(&self) -> Option<&'static str> {
        match self.tokens.get(self.pos) {
            Some(Tok::Op(o)) => Some(o),
            _ => None,
        }
    }

    fn expect(&mut self, op: &str) -> Result<(), String> {
        if self.peek_op() == Some(op) {
            self.pos += 1;
            Ok(())
        } else {
            Err(format!(
                "expected `{op}`, found {}",
                self.tokens
                    .get(self.pos)
                    .map(|t| format!("`{}`", t.text()))
                    .unwrap_or_else(|| "the end".into())
            ))
        }
    }

    fn expr(&mut self) -> Result<i64, String> {
        let mut v = self.term()?;
        while let Some(op @ ("+" | "-")) = self.peek_op() {
            self.pos += 1;
            let r = self.term()?;
            v = if op == "+" {
                v.checked_add(r)
            } else {
                v.checked_sub(r)
            }
            .ok_or("integer overflow")?;
        }
        Ok(v)
    }

    fn term(&mut self) -> Result<i64, String> {
        let mut v = self.unary()?;
        while let Some(op @ ("*" | "//" | "%")) = self.peek_op() {
            self.pos += 1;
            let r = self.unary()?;
            v = match op {
                "*" => v.checked_mul(r).ok_or("integer overflow")?,
                "//" => floor_div(v, r)?,
                _ => floor_mod(v, r)?,
            };
        }
        Ok(v)
    }

    fn unary(&mut self) -> Result<i64, String> {
        if self.peek_op() == Some("-") {
            self.pos += 1;
            return self
                .unary()?
                .checked_neg()
                .ok_or_else(|| "integer overflow".into());
        }
        let base = self.primary()?;
        if self.peek_op() == Some("**") {
            self.pos += 1;
            let exp = self.unary()?;
            let exp = u32::try_from(exp).map_err(|_| format!("bad exponent {exp}"))?;
            return base
                .checked_pow(exp)
                .ok_or_else(|| "integer overflow".into());
        }
        Ok(base)
    }

    fn primary(&mut self) -> Result<i64, String> {
        let tok = self.tokens.get(self.pos).cloned();
        self.pos += 1;
        match tok {
            Some(Tok::Int(v)) => Ok(v),
            Some(Tok::Op("(")) => {
                let v = self.expr()?;
                self.expect(")")?;
                Ok(v)
            }
            Some(Tok::Name(name)) if self.peek_op() == Some("(") => {
                self.pos += 1;
                let mut args = vec![self.expr()?];
                while self.peek_op() == Some(",") {
                    self.pos += 1;
                    args.push(self.expr()?);
                }
                self.expect(")")?;
                call(&name, &args)
            }
            Some(Tok::Name(name)) => {
                (self.lookup)(&name).ok_or_else(|| format!("unknown name `{name}`"))
            }
            Some(t) => Err(format!("unexpected `{}`", t.text())),
            None => Err("unexpected end of expression".into()),
        }
    }
}

fn call(name: &str, args: &[i64]) -> Result<i64, String> {
    match (name, args) {
        ("cdiv", [a, b]) => {
            let num = a.checked_add(*b).and_then(|s| s.checked_sub(1));
            floor_div(num.ok_or("integer overflow")?, *b)
        }
        ("min", [_, ..]) => Ok(*args.iter().min().unwrap_or(&0)),
        ("max", [_, ..]) => Ok(*args.iter().max().unwrap_or(&0)),
        ("cdiv", _) => Err(format!("cdiv takes 2 arguments, got {}", args.len())),
        _ => Err(format!("unknown function `{name}`")),
    }
}

fn floor_div(a: i64, b: i64) -> Result<i64, String> {
    if b == 0 {
        return Err("division by zero".into());
    }
    let q = a.checked_div(b).ok_or("integer overflow")?;
    Ok(if (a % b != 0) && ((a < 0) != (b < 0)) {
        q - 1
    } else {
        q
    })
}

fn floor_mod(a: i64, b: i64) -> Result<i64, String> {
    let q = floor_div(a, b)?;
    a.checked_sub(q.checked_mul(b).ok_or("integer overflow")?)
        .ok_or_else(|| "integer overflow".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(s: &str) -> Result<i64, String> {
        eval(s, &|n| match n {
            "M" => Some(100),
            "BLOCK" => Some(64),
            _ => None,
        })
    }

    #[test]
    fn arithmetic_follows_python() {
        assert_eq!(ev("cdiv(M, BLOCK) * cdiv(M, 32)"), Ok(2 * 4));
        assert_eq!(ev("2*M*M + 1"), Ok(20001));
        assert_eq!(ev("-7 // 2"), Ok(-4));
        assert_eq!(ev("-7 % 2"), Ok(1));
        assert_eq!(ev("7 % -2"), Ok(-1));
        assert_eq!(ev("min(M, BLOCK, 3) + max(1, 2)"), Ok(5));
        assert_eq!(ev("(1 + 2) * 3 - 4"), Ok(5));
        assert_eq!(ev("2**26"), Ok(1 << 26));
        assert_eq!(ev("1_000"), Ok(1000));
    }

    #[test]
    fn errors_are_reported_not_panics() {
        assert!(ev("M // 0").unwrap_err().contains("division by zero"));
        assert!(ev("N").unwrap_err().contains("unknown name `N`"));
        assert!(ev("M / 2").unwrap_err().contains("//"));
        assert!(ev("9223372036854775807 + 1").is_err());
        assert!(ev("cdiv(1)").is_err());
        assert!(ev("(1").is_err());
        assert!(ev("1 2").is_err());
        assert!(ev("").is_err());
        assert!(ev("foo(1)").is_err());
    }
}
