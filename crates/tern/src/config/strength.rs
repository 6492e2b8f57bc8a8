//! How much a `SECRET_KEY` could be guessed: an estimate in bits, in the
//! manner of zxcvbn (Dropbox's password estimator), small enough to live
//! here.
//!
//! The key is read as the cheapest sequence of parts an attacker who knows
//! how people write secrets would try: single characters from the key's
//! alphabet, words of [`WORDS`] (any case), runs like `abcd` or `9876`,
//! runs of digits (a year), and repeats of an earlier part. Each part
//! costs the bits needed to name it; the key's estimate is the cheapest
//! total. A key from a random generator is almost all single characters
//! and scores near its real entropy (32 random alphanumerics: about 190
//! bits, never under 150 in 100,000 draws); a phrase of common words, a
//! sequence or a repeat scores far below it
//! (`my-super-secret-key-for-production-2024`: about 80).

/// Bits a production `SECRET_KEY` must reach by [`estimate_bits`]: the
/// usual floor for a symmetric key (a random 32-byte key has 256).
pub(crate) const MIN_BITS: f64 = 128.0;

/// Longest prefix estimated: the search grows with the cube of the
/// length, and 256 characters of anything random are far past
/// [`MIN_BITS`].
const MAX_LEN: usize = 256;

/// Words people put in secrets: common English, the vocabulary of
/// configuration (`secret`, `production`, `changeme`), well-known
/// passwords. A part found here costs log2(the list's length) + 1 bits
/// (the +1 for its capitals) instead of a character's bits per letter.
const WORDS: &str = "\
the be to of and in that have it for not on with he as you do at this but his by from
they we say her she or an will my one all would there their what so up out if about who
get which go me when make can like time no just him know take people into year your good
some could them see other than then now look only come its over think also back after
use two how our work first well way even new want because any these give day most us is
are was were been has had did said made secret secrets key keys password passwords
passphrase pass word token tokens session sessions cookie cookies sign signing signed
encrypt encryption crypto private public salt hash auth login admin root user users
default example sample demo test testing tests dev develop development production prod
staging stage local localhost server servers service app apps application web site
website api backend frontend django rails flask tern rust config configuration setting
settings env environment change changeme replace please insecure unsafe safe secure
security strong random long very super really mine company project team master main
primary backup temp temporary value string text here goes put hello world foo bar baz
qux abc xyz admin123 letmein welcome monkey dragon qwerty asdf zxcv football baseball
iloveyou sunshine princess shadow superman batman trustno1 access love god money three
four five six seven eight nine ten zero hundred thousand million second third last next
red green blue black white yellow orange purple month week today tomorrow night morning
summer winter spring autumn fall big small little large great high low old young bad
best better right left true false yes open close start end stop begin cat dog fish bird
horse cow lion tiger bear wolf fox eagle correct battery staple apple banana cherry
lemon name names data database db sql redis cache queue mail email smtp http https www
com net org io cloud aws gcp azure docker kube cluster node nodes january february march
april may june july august september october november december monday tuesday wednesday
thursday friday saturday sunday set post delete update create read write man woman child
children men women boy girl friend family home house car city country state life hand
part place case point government number group problem fact";

/// The estimated bits of `key` (its first [`MAX_LEN`] bytes).
pub(crate) fn estimate_bits(key: &[u8]) -> f64 {
    let key = &key[..key.len().min(MAX_LEN)];
    let n = key.len();
    let lower: Vec<u8> = key.iter().map(u8::to_ascii_lowercase).collect();
    let mut words: Vec<&[u8]> = WORDS
        .split_ascii_whitespace()
        .chain(super::EXAMPLE_SECRETS.iter().copied())
        .map(str::as_bytes)
        .filter(|w| w.len() >= 2)
        .collect();
    words.sort_unstable();
    words.dedup();
    let word_bits = (words.len() as f64).log2() + 1.0;
    let longest = words.iter().map(|w| w.len()).max().unwrap_or(0);
    let char_bits = alphabet(key).log2();

    // cheapest[i]: the cheapest reading of key[..i].
    let mut cheapest = vec![f64::INFINITY; n + 1];
    cheapest[0] = 0.0;
    for i in 0..n {
        let here = cheapest[i];
        let mut offer = |end: usize, bits: f64| {
            if here + bits < cheapest[end] {
                cheapest[end] = here + bits;
            }
        };
        // One character; a separator used before costs little.
        let c = key[i];
        let repeated_separator = !c.is_ascii_alphanumeric() && key[..i].contains(&c);
        offer(i + 1, if repeated_separator { 1.0 } else { char_bits });
        // A word.
        for len in 2..=longest.min(n - i) {
            if words.binary_search(&&lower[i..i + len]).is_ok() {
                offer(i + len, word_bits);
            }
        }
        // A run of steps of +1 or -1 (`abcd`, `9876`): its start, its
        // direction and its length.
        if i + 1 < n {
            let step = key[i + 1] as i16 - key[i] as i16;
            if step == 1 || step == -1 {
                let mut end = i + 2;
                while end < n && key[end] as i16 - key[end - 1] as i16 == step {
                    end += 1;
                }
                for stop in i + 3..=end {
                    offer(stop, char_bits + 1.0 + ((stop - i) as f64).log2());
                }
            }
        }
        // Digits (a year, a PIN): 3.3 bits each, whatever the alphabet.
        let digits = key[i..].iter().take_while(|b| b.is_ascii_digit()).count();
        for len in 3..=digits {
            offer(i + len, len as f64 * 10f64.log2());
        }
        // A repeat of something earlier: where it was and how long.
        for len in 3..=n - i {
            let part = &key[i..i + len];
            if !key[..i + len - 1].windows(len).any(|w| w == part) {
                break;
            }
            offer(i + len, ((i + 1) as f64).log2() + (len as f64).log2());
        }
    }
    cheapest[n]
}

/// The size of the alphabet the key's characters were drawn from, judged
/// by the classes it uses: hexadecimal (one case), else lower case 26,
/// upper case 26, digits 10, other printable ASCII 33; any other byte
/// makes it 256.
fn alphabet(key: &[u8]) -> f64 {
    if key.iter().any(|b| !(0x20..0x7f).contains(b)) {
        return 256.0;
    }
    let hex_lower = key.iter().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'));
    let hex_upper = key.iter().all(|b| matches!(b, b'0'..=b'9' | b'A'..=b'F'));
    if hex_lower || hex_upper {
        return 16.0;
    }
    let mut size = 0.0;
    if key.iter().any(u8::is_ascii_lowercase) {
        size += 26.0;
    }
    if key.iter().any(u8::is_ascii_uppercase) {
        size += 26.0;
    }
    if key.iter().any(u8::is_ascii_digit) {
        size += 10.0;
    }
    if key.iter().any(|b| !b.is_ascii_alphanumeric()) {
        size += 33.0;
    }
    size
}

#[cfg(test)]
mod tests {
    use super::{estimate_bits, MIN_BITS};

    /// xorshift64*: reproducible keys "from a generator" for the test.
    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
        }
        fn key(&mut self, alphabet: &[u8], len: usize) -> Vec<u8> {
            (0..len)
                .map(|_| alphabet[(self.next() % alphabet.len() as u64) as usize])
                .collect()
        }
    }

    #[test]
    fn generated_keys_pass_with_room() {
        let alnum = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
        let base64 = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
        let hex = b"0123456789abcdef";
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        for (name, alphabet, len) in [
            ("32 alphanumerics", &alnum[..], 32),
            ("64 hex digits (32 bytes)", &hex[..], 64),
            ("base64 of 32 bytes", &base64[..], 43),
        ] {
            let worst = (0..1500)
                .map(|_| estimate_bits(&rng.key(alphabet, len)))
                .fold(f64::INFINITY, f64::min);
            assert!(worst >= MIN_BITS + 16.0, "{name}: worst {worst:.0} bits");
        }
        assert!(estimate_bits(b"q7Vv2l1Xb9kP0sYz4TgH8mN3cR6wE5uJ") > 170.0);
        // Raw bytes (a key set in code): 8 bits each.
        let raw: Vec<u8> = (0..32).map(|_| rng.next() as u8).collect();
        assert!(estimate_bits(&raw) > 200.0);
    }

    #[test]
    fn phrases_sequences_and_repeats_fall_short() {
        for weak in [
            "my-super-secret-key-for-production-2024",
            "MY_SUPER_SECRET_KEY_FOR_PRODUCTION_2024",
            "MySuperSecretKeyForProduction2024!",
            "mysupersecretkeyforproduction2024",
            "0123456789abcdef0123456789abcdef0123",
            "abcdefghijklmnopqrstuvwxyz012345",
            "abcdabcdabcdabcdabcdabcdabcdabcd",
            "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
            "correct-horse-battery-staple-tern-production-secret",
            "this is the secret key of our production server ok",
            "a-secret-key-for-the-account-tests-0123456789",
            "changeme-changeme-changeme-changeme",
        ] {
            let bits = estimate_bits(weak.as_bytes());
            assert!(bits < MIN_BITS, "{weak}: {bits:.0} bits");
        }
    }
}
