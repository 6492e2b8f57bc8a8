//! The 8-field JSON body of the mixed workload's writes, and the JSON
//! writing the expected responses need (done by hand: no dependencies).

/// The body of every write (`POST`, `PUT`, `PATCH`) in the mixed
/// workload, sent as compact JSON with its fields in this order:
///
/// ```json
/// {"id":123,"delta":-45,"score":12.25,"active":true,"name":"name-ab12",
///  "tags":[3,14,15],"note":null,"owner":{"id":9,"name":"owner-9"}}
/// ```
///
/// Servers decode it into a typed struct of the same shape (`u64`, `i64`,
/// `f64`, `bool`, `String`, `Vec<u32>`, `Option<String>`, nested object)
/// and compute the response from every field: see [`Payload::sum`] and
/// [`Payload::lengths`]. In the table, `score` is always a multiple of
/// 0.25 below 1,000 (exact in binary floating point), strings are ASCII
/// letters, digits and `-`, and `note` is `null` about a third of the time.
#[derive(Debug, Clone, PartialEq)]
pub struct Payload {
    /// `u64`.
    pub id: u64,
    /// `i64`, often negative.
    pub delta: i64,
    /// `f64`, a multiple of 0.25.
    pub score: f64,
    /// `bool`.
    pub active: bool,
    /// `String`.
    pub name: String,
    /// `Vec<u32>`, 0 to 8 elements.
    pub tags: Vec<u32>,
    /// `Option<String>`, `null` when `None`.
    pub note: Option<String>,
    /// A nested object.
    pub owner: Owner,
}

/// The nested object of a [`Payload`]: `{"id":9,"name":"owner-9"}`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Owner {
    /// `u64`.
    pub id: u64,
    /// `String`.
    pub name: String,
}

impl Payload {
    /// The `sum` of a write's response: `id + delta + round(score * 4) +
    /// (active as 0 or 1) + Σ tags + owner.id`, in `i64`.
    ///
    /// Integers only, so every serializer writes it the same way; the
    /// table's values cannot overflow.
    ///
    /// ```
    /// # use tern_bench_workload::{Owner, Payload};
    /// let p = Payload {
    ///     id: 10, delta: -3, score: 1.25, active: true, name: "n".into(),
    ///     tags: vec![1, 2], note: None, owner: Owner { id: 100, name: "o".into() },
    /// };
    /// assert_eq!(p.sum(), 10 - 3 + 5 + 1 + 3 + 100);
    /// ```
    pub fn sum(&self) -> i64 {
        self.id as i64
            + self.delta
            + (self.score * 4.0).round() as i64
            + i64::from(self.active)
            + self.tags.iter().map(|&t| i64::from(t)).sum::<i64>()
            + self.owner.id as i64
    }

    /// The `len` of a write's response: `name.len() + note.len() (0 when
    /// null) + owner.name.len() + tags.len()`, lengths in bytes.
    ///
    /// ```
    /// # use tern_bench_workload::{Owner, Payload};
    /// let p = Payload {
    ///     id: 1, delta: 0, score: 0.0, active: false, name: "abc".into(),
    ///     tags: vec![7, 8], note: Some("hi".into()), owner: Owner { id: 2, name: "o".into() },
    /// };
    /// assert_eq!(p.lengths(), 3 + 2 + 1 + 2);
    /// ```
    pub fn lengths(&self) -> u64 {
        (self.name.len() + self.note.as_ref().map_or(0, String::len) + self.owner.name.len()) as u64
            + self.tags.len() as u64
    }

    /// The compact JSON of the request body (fields in declaration order,
    /// `score` written with Rust's shortest round-trip form, which always
    /// has a `.`).
    ///
    /// ```
    /// # use tern_bench_workload::{Owner, Payload};
    /// let p = Payload {
    ///     id: 1, delta: -2, score: 3.5, active: false, name: "n".into(),
    ///     tags: vec![], note: None, owner: Owner { id: 4, name: "o".into() },
    /// };
    /// assert_eq!(
    ///     p.to_json(),
    ///     br#"{"id":1,"delta":-2,"score":3.5,"active":false,"name":"n","tags":[],"note":null,"owner":{"id":4,"name":"o"}}"#
    /// );
    /// ```
    ///
    /// # Panics
    /// If `score` is not finite (JSON has no NaN or infinity).
    pub fn to_json(&self) -> Vec<u8> {
        assert!(self.score.is_finite(), "JSON cannot carry {}", self.score);
        let mut out = Vec::with_capacity(160);
        out.extend_from_slice(
            format!(
                r#"{{"id":{},"delta":{},"score":{:?},"active":{},"name":"#,
                self.id, self.delta, self.score, self.active
            )
            .as_bytes(),
        );
        json_string(&mut out, &self.name);
        out.extend_from_slice(b",\"tags\":[");
        for (i, tag) in self.tags.iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            out.extend_from_slice(tag.to_string().as_bytes());
        }
        out.extend_from_slice(b"],\"note\":");
        match &self.note {
            Some(note) => json_string(&mut out, note),
            None => out.extend_from_slice(b"null"),
        }
        out.extend_from_slice(format!(r#","owner":{{"id":{},"name":"#, self.owner.id).as_bytes());
        json_string(&mut out, &self.owner.name);
        out.extend_from_slice(b"}}");
        out
    }
}

/// Appends `s` as a JSON string escaped the way serde_json does: `"`, `\`
/// and control characters only (`\b \f \n \r \t`, else `\u00XX`); `/` and
/// non-ASCII are written as they are.
pub(crate) fn json_string(out: &mut Vec<u8>, s: &str) {
    out.push(b'"');
    for &b in s.as_bytes() {
        match b {
            b'"' => out.extend_from_slice(b"\\\""),
            b'\\' => out.extend_from_slice(b"\\\\"),
            b'\n' => out.extend_from_slice(b"\\n"),
            b'\r' => out.extend_from_slice(b"\\r"),
            b'\t' => out.extend_from_slice(b"\\t"),
            0x08 => out.extend_from_slice(b"\\b"),
            0x0c => out.extend_from_slice(b"\\f"),
            0..=0x1f => {
                const HEX: &[u8; 16] = b"0123456789abcdef";
                out.extend_from_slice(b"\\u00");
                out.push(HEX[usize::from(b >> 4)]);
                out.push(HEX[usize::from(b & 0xf)]);
            }
            _ => out.push(b),
        }
    }
    out.push(b'"');
}

#[cfg(test)]
mod tests {
    use super::json_string;

    #[test]
    fn escapes_like_serde_json() {
        let cases: &[(&str, &str)] = &[
            ("plain-1", r#""plain-1""#),
            ("a\"b\\c", r#""a\"b\\c""#),
            ("\n\t\u{1}", r#""\n\t\u0001""#),
            ("a/b é", "\"a/b é\""),
        ];
        for (input, want) in cases {
            let mut out = Vec::new();
            json_string(&mut out, input);
            assert_eq!(String::from_utf8_lossy(&out), *want);
        }
    }
}
