//! Float formats of the interpreter: rounding an `f64` to a narrower format
//! (round to nearest even or toward zero), and the bit encodings of f16,
//! bf16 (via `half`) and fp8 e4m3fn / e5m2 (by hand, OCP FP8).
//!
//! Every float the interpreter holds is an `f64` that is exactly representable
//! in its element type; [`round`] is what keeps it so after each operation.
//!
//! Narrowing to fp8 saturates: values beyond the largest finite number, and
//! infinities, become ±max (448 for e4m3fn, 57344 for e5m2), NaN stays NaN.
//! That is what Triton's conversions do on Hopper (`cvt.rn.satfinite.e4m3x2`
//! / `.e5m2x2`). Narrowing to f16/bf16/f32 overflows to infinity (IEEE) when
//! rounding to nearest, and to ±max when rounding toward zero.

use crate::types::ScalarType;

/// A binary float format with an implicit leading bit.
#[derive(Clone, Copy, Debug)]
pub struct Format {
    /// Explicit mantissa bits.
    pub man: u32,
    /// Exponent of the smallest normal number.
    pub emin: i32,
    /// Exponent of the largest finite number.
    pub emax: i32,
    /// Largest finite value.
    pub max: f64,
    /// Overflow (and infinity) saturates to `max` instead of giving infinity.
    pub saturate: bool,
}

pub const F16: Format = Format {
    man: 10,
    emin: -14,
    emax: 15,
    max: 65504.0,
    saturate: false,
};
pub const BF16: Format = Format {
    man: 7,
    emin: -126,
    emax: 127,
    max: 3.3895313892515355e38,
    saturate: false,
};
pub const F32: Format = Format {
    man: 23,
    emin: -126,
    emax: 127,
    max: f32::MAX as f64,
    saturate: false,
};
/// tf32: f32's range with f16's 10-bit mantissa (operands of tf32 `dot`).
pub const TF32: Format = Format {
    man: 10,
    emin: -126,
    emax: 127,
    max: 3.4011621342146535e38,
    saturate: false,
};
pub const E4M3: Format = Format {
    man: 3,
    emin: -6,
    emax: 8,
    max: 448.0,
    saturate: true,
};
pub const E5M2: Format = Format {
    man: 2,
    emin: -14,
    emax: 15,
    max: 57344.0,
    saturate: true,
};

/// The format of a float scalar type; `None` for f64 and integers.
pub fn format_of(st: ScalarType) -> Option<Format> {
    match st {
        ScalarType::F16 => Some(F16),
        ScalarType::BF16 => Some(BF16),
        ScalarType::F32 => Some(F32),
        ScalarType::F8E4M3 => Some(E4M3),
        ScalarType::F8E5M2 => Some(E5M2),
        _ => None,
    }
}

/// Rounds `x` to `fmt`, to nearest even, or toward zero when `rtz`.
pub fn round_fmt(x: f64, fmt: Format, rtz: bool) -> f64 {
    if x.is_nan() {
        return f64::NAN;
    }
    let a = x.abs();
    if a.is_infinite() {
        return if fmt.saturate { fmt.max.copysign(x) } else { x };
    }
    if a == 0.0 {
        return x;
    }
    let overflow = || {
        if fmt.saturate || rtz {
            fmt.max.copysign(x)
        } else {
            f64::INFINITY.copysign(x)
        }
    };
    // Unbiased exponent of `a` (f64 subnormals read as -1023: below any emin).
    let e = ((a.to_bits() >> 52) & 0x7ff) as i32 - 1023;
    if e > fmt.emax + 1 {
        return overflow();
    }
    let e = e.max(fmt.emin);
    // Scaling by a power of two is exact here: `q` has at most man+2 integer
    // bits and `ulp` is a normal f64.
    let ulp = 2f64.powi(e - fmt.man as i32);
    let q = a / ulp;
    let r = if rtz { q.trunc() } else { q.round_ties_even() };
    let y = r * ulp;
    if y > fmt.max {
        return overflow();
    }
    y.copysign(x)
}

/// Rounds `x` to the float type `st` (identity for f64).
pub fn round(st: ScalarType, x: f64, rtz: bool) -> f64 {
    match st {
        ScalarType::F64 => x,
        // `as f32` rounds to nearest even and overflows to infinity.
        ScalarType::F32 if !rtz => x as f32 as f64,
        _ => match format_of(st) {
            Some(fmt) => round_fmt(x, fmt, rtz),
            None => x,
        },
    }
}

/// Encodes an fp8 value (rounding it first) as e4m3fn or e5m2 bits.
pub fn fp8_encode(x: f64, fmt: Format, is_e4m3: bool) -> u8 {
    let bias = if is_e4m3 { 7 } else { 15 };
    if x.is_nan() {
        // e4m3fn has one NaN per sign (S.1111.111); e5m2 uses IEEE quiet NaN.
        return if is_e4m3 { 0x7f } else { 0x7e };
    }
    let y = round_fmt(x, fmt, false);
    let sign = if y.is_sign_negative() { 0x80u8 } else { 0 };
    let a = y.abs();
    if a.is_infinite() {
        // Only reachable for a non-saturating e5m2 format.
        return sign | 0x7c;
    }
    if a == 0.0 {
        return sign;
    }
    let e = (((a.to_bits() >> 52) & 0x7ff) as i32 - 1023).max(fmt.emin);
    let m = (a / 2f64.powi(e - fmt.man as i32)) as u32; // exact: man+1 bits
    let (biased, mant) = if m < (1 << fmt.man) {
        (0, m) // subnormal
    } else {
        ((e + bias) as u32, m - (1 << fmt.man))
    };
    sign | ((biased as u8) << fmt.man) | mant as u8
}

/// Decodes e4m3fn or e5m2 bits.
pub fn fp8_decode(bits: u8, is_e4m3: bool) -> f64 {
    let (man, exp_bits, bias) = if is_e4m3 { (3, 4, 7) } else { (2, 5, 15) };
    let sign = if bits & 0x80 != 0 { -1.0 } else { 1.0 };
    let e = ((bits & 0x7f) >> man) as i32;
    let m = (bits & ((1 << man) - 1)) as f64;
    let all_ones = (1 << exp_bits) - 1;
    if is_e4m3 {
        if bits & 0x7f == 0x7f {
            return f64::NAN;
        }
    } else if e == all_ones {
        return if m == 0.0 {
            sign * f64::INFINITY
        } else {
            f64::NAN
        };
    }
    if e == 0 {
        sign * m * 2f64.powi(1 - bias - man)
    } else {
        sign * (1.0 + m / (1 << man) as f64) * 2f64.powi(e - bias)
    }
}

/// Bits of a float value of type `st` (rounded to `st` first).
pub fn encode(st: ScalarType, x: f64) -> u64 {
    match st {
        ScalarType::F64 => x.to_bits(),
        ScalarType::F32 => (x as f32).to_bits() as u64,
        ScalarType::F16 => half::f16::from_f64(round(st, x, false)).to_bits() as u64,
        ScalarType::BF16 => half::bf16::from_f64(round(st, x, false)).to_bits() as u64,
        ScalarType::F8E4M3 => fp8_encode(x, E4M3, true) as u64,
        ScalarType::F8E5M2 => fp8_encode(x, E5M2, false) as u64,
        _ => 0,
    }
}

/// The value of float bits of type `st`.
pub fn decode(st: ScalarType, bits: u64) -> f64 {
    match st {
        ScalarType::F64 => f64::from_bits(bits),
        ScalarType::F32 => f32::from_bits(bits as u32) as f64,
        ScalarType::F16 => half::f16::from_bits(bits as u16).to_f64(),
        ScalarType::BF16 => half::bf16::from_bits(bits as u16).to_f64(),
        ScalarType::F8E4M3 => fp8_decode(bits as u8, true),
        ScalarType::F8E5M2 => fp8_decode(bits as u8, false),
        _ => 0.0,
    }
}

/// The error function, to about 1e-15 relative: Maclaurin series below 2.5,
/// Laplace's continued fraction for erfc above (no cancellation in either).
pub fn erf(x: f64) -> f64 {
    if x.is_nan() {
        return x;
    }
    let a = x.abs();
    if a < 2.5 {
        // erf(x) = 2/sqrt(pi) * sum_n (-1)^n x^(2n+1) / (n! (2n+1))
        let x2 = a * a;
        let mut term = a; // (-1)^n x^(2n+1) / n!
        let mut sum = a;
        let mut n = 0.0;
        loop {
            n += 1.0;
            term *= -x2 / n;
            let t = term / (2.0 * n + 1.0);
            sum += t;
            if t.abs() < 1e-17 * sum.abs() {
                break;
            }
        }
        (sum * std::f64::consts::FRAC_2_SQRT_PI).copysign(x)
    } else if a < 6.0 {
        // erfc(x) = exp(-x^2)/sqrt(pi) / (x + (1/2)/(x + 1/(x + (3/2)/(x + ...))))
        let mut t = a;
        for k in (1..=80).rev() {
            t = a + (k as f64 / 2.0) / t;
        }
        let erfc = (-a * a).exp() / std::f64::consts::PI.sqrt() / t;
        (1.0 - erfc).copysign(x)
    } else {
        1f64.copysign(x)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn erf_values() {
        let cases = [
            (0.5, 0.5204998778130465),
            (1.0, 0.8427007929497149),
            (2.0, 0.9953222650189527),
            (2.5, 0.999_593_047_982_555),
            (3.0, 0.9999779095030014),
            (0.01, 0.011283415555849618),
            (-1.5, -0.9661051464753108),
        ];
        for (x, want) in cases {
            let got = erf(x);
            assert!(
                ((got - want) / want).abs() < 1e-13,
                "erf({x}) = {got}, want {want}"
            );
        }
        // erfc(3) via the continued fraction branch, checked on 1 - erf.
        assert!(((1.0 - erf(3.0)) - 2.209049699858544e-05).abs() < 1e-16);
    }

    #[test]
    fn fp8_roundtrip_all_codes() {
        for is_e4m3 in [true, false] {
            let fmt = if is_e4m3 { E4M3 } else { E5M2 };
            for b in 0..=255u8 {
                let v = fp8_decode(b, is_e4m3);
                if v.is_nan() || v.is_infinite() {
                    continue;
                }
                assert_eq!(round_fmt(v, fmt, false), v);
                assert_eq!(fp8_encode(v, fmt, is_e4m3), b, "code {b:#x} value {v}");
            }
        }
    }
}
