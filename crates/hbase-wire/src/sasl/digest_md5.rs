//! DIGEST-MD5 (RFC 2831) as HBase's token authentication uses it: the
//! server's challenge, the check of the client's digest-response and the
//! `rspauth` proof, and the matching client for tests and Rust callers.
//!
//! Only what HBase negotiates is accepted: quality of protection `auth`
//! (no integrity or privacy layer), `charset=utf-8`, `algorithm=md5-sess`,
//! one authentication per connection (`nc=00000001`, no subsequent
//! authentication). Every message is a comma-separated list of
//! `name=value` or `name="quoted value"` directives:
//!
//! ```text
//! challenge: realm="default",nonce="<random>",qop="auth",charset=utf-8,algorithm=md5-sess
//! response:  charset=utf-8,username="<base64 token identifier>",realm="default",
//!            nonce="<as sent>",nc=00000001,cnonce="<client random>",
//!            digest-uri="null/default",maxbuf=65536,response=<32 hex>,qop=auth
//! final:     rspauth=<32 hex>
//! ```
//!
//! The digests (RFC 2831 §2.1.2.1), H = MD5, HEX = lowercase hex:
//!
//! ```text
//! A1       = H(user ":" realm ":" password) ":" nonce ":" cnonce [":" authzid]
//! A2       = "AUTHENTICATE:" digest-uri          (rspauth: ":" digest-uri)
//! response = HEX(H(HEX(H(A1)) ":" nonce ":" nc ":" cnonce ":" qop ":" HEX(H(A2))))
//! ```
//!
//! Parsing is strict and bounded: a message longer than
//! [`MAX_MESSAGE`] bytes, a control character, an unterminated quote, a
//! repeated once-only directive or a missing required one is an error
//! naming it, never a panic.

use super::SaslError;
use crate::md5;

/// RFC 2831: a digest-response (and a challenge) is less than 4096 bytes.
pub const MAX_MESSAGE: usize = 4096;
/// At most this many directives in one message.
const MAX_DIRECTIVES: usize = 64;
/// The only nonce count accepted: one authentication per connection.
const NONCE_COUNT: &str = "00000001";

/// One parsed directive: a lowercase name and its unquoted value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Directive {
    pub name: String,
    pub value: String,
}

fn malformed(what: &'static str, offset: usize, reason: &'static str) -> SaslError {
    SaslError::Malformed {
        what,
        offset,
        reason,
    }
}

/// RFC 2616 separators, which may not appear in a token.
fn is_separator(b: u8) -> bool {
    matches!(
        b,
        b'(' | b')'
            | b'<'
            | b'>'
            | b'@'
            | b','
            | b';'
            | b':'
            | b'\\'
            | b'"'
            | b'/'
            | b'['
            | b']'
            | b'?'
            | b'='
            | b'{'
            | b'}'
            | b' '
            | b'\t'
    )
}

fn is_lws(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\r' | b'\n')
}

/// Parses a directive list (`what` names the message in errors). Values
/// must be UTF-8.
pub fn parse_directives(what: &'static str, bytes: &[u8]) -> Result<Vec<Directive>, SaslError> {
    if bytes.len() > MAX_MESSAGE {
        return Err(SaslError::TooLarge {
            what,
            len: bytes.len() as u64,
            max: MAX_MESSAGE,
        });
    }
    let mut out = Vec::new();
    let mut pos = 0;
    let at = |pos: usize| bytes.get(pos).copied();
    loop {
        // Empty list elements and white space between them are allowed.
        while at(pos).is_some_and(|b| is_lws(b) || b == b',') {
            pos += 1;
        }
        if pos >= bytes.len() {
            break;
        }
        let name_start = pos;
        while at(pos).is_some_and(|b| b > 0x20 && b < 0x7f && !is_separator(b)) {
            pos += 1;
        }
        if pos == name_start {
            return Err(malformed(what, pos, "expected a directive name"));
        }
        let name = String::from_utf8_lossy(bytes.get(name_start..pos).unwrap_or_default())
            .to_ascii_lowercase();
        while at(pos).is_some_and(is_lws) {
            pos += 1;
        }
        if at(pos) != Some(b'=') {
            return Err(malformed(what, pos, "expected '=' after a directive name"));
        }
        pos += 1;
        while at(pos).is_some_and(is_lws) {
            pos += 1;
        }
        let mut value = Vec::new();
        if at(pos) == Some(b'"') {
            pos += 1;
            loop {
                match at(pos) {
                    None => return Err(malformed(what, pos, "unterminated quoted string")),
                    Some(b'"') => {
                        pos += 1;
                        break;
                    }
                    Some(b'\\') => {
                        let Some(escaped) = at(pos + 1) else {
                            return Err(malformed(what, pos, "unterminated quoted string"));
                        };
                        if escaped < 0x20 && escaped != b'\t' || escaped == 0x7f {
                            return Err(malformed(what, pos + 1, "control character"));
                        }
                        value.push(escaped);
                        pos += 2;
                    }
                    Some(b) if b < 0x20 && b != b'\t' || b == 0x7f => {
                        return Err(malformed(what, pos, "control character"));
                    }
                    Some(b) => {
                        value.push(b);
                        pos += 1;
                    }
                }
            }
        } else {
            let start = pos;
            while at(pos).is_some_and(|b| b > 0x20 && b < 0x7f && !is_separator(b)) {
                pos += 1;
            }
            if pos == start {
                return Err(malformed(what, pos, "expected a value"));
            }
            value.extend_from_slice(bytes.get(start..pos).unwrap_or_default());
        }
        let value =
            String::from_utf8(value).map_err(|_| malformed(what, pos, "value is not UTF-8"))?;
        if out.len() == MAX_DIRECTIVES {
            return Err(malformed(what, name_start, "too many directives"));
        }
        out.push(Directive { name, value });
        while at(pos).is_some_and(is_lws) {
            pos += 1;
        }
        match at(pos) {
            None => break,
            Some(b',') => pos += 1,
            Some(_) => return Err(malformed(what, pos, "expected ',' between directives")),
        }
    }
    Ok(out)
}

/// Directives by name, each once-only name checked for repeats.
struct Fields<'a> {
    what: &'static str,
    list: &'a [Directive],
}

impl<'a> Fields<'a> {
    fn new(
        what: &'static str,
        list: &'a [Directive],
        once: &[&str],
    ) -> Result<Fields<'a>, SaslError> {
        for (i, d) in list.iter().enumerate() {
            if once.contains(&d.name.as_str())
                && list.iter().skip(i + 1).any(|other| other.name == d.name)
            {
                return Err(SaslError::Duplicate {
                    what,
                    name: d.name.clone(),
                });
            }
        }
        Ok(Fields { what, list })
    }

    fn get(&self, name: &str) -> Option<&'a str> {
        self.list
            .iter()
            .find(|d| d.name == name)
            .map(|d| d.value.as_str())
    }

    fn required(&self, name: &'static str) -> Result<&'a str, SaslError> {
        self.get(name).ok_or(SaslError::Missing {
            what: self.what,
            name,
        })
    }
}

/// A quoted-string value: backslash and quote escaped.
fn quote(value: &str) -> String {
    let mut out = String::with_capacity(value.len() + 2);
    out.push('"');
    for c in value.chars() {
        if c == '"' || c == '\\' {
            out.push('\\');
        }
        out.push(c);
    }
    out.push('"');
    out
}

fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        for nibble in [b >> 4, b & 15] {
            out.push(char::from(
                DIGITS.get(usize::from(nibble)).copied().unwrap_or(b'0'),
            ));
        }
    }
    out
}

/// RFC 2831 with `charset=utf-8`: a string all of whose characters fit
/// ISO 8859-1 is hashed in ISO 8859-1, any other in UTF-8 (as Java's and
/// Cyrus's implementations do). Without the charset only ISO 8859-1 is
/// possible.
fn a1_bytes(s: &str, utf8: bool) -> Result<Vec<u8>, SaslError> {
    if s.chars().all(|c| u32::from(c) <= 0xff) {
        return Ok(s.chars().map(|c| u32::from(c) as u8).collect());
    }
    if utf8 {
        return Ok(s.as_bytes().to_vec());
    }
    Err(SaslError::Refused {
        what: "DIGEST-MD5 response",
        name: "charset",
        value: String::new(),
        why: "a name outside ISO 8859-1 needs charset=utf-8",
    })
}

/// The inputs of one digest.
struct DigestInput<'a> {
    username: &'a str,
    realm: &'a str,
    password: &'a [u8],
    nonce: &'a str,
    cnonce: &'a str,
    authzid: Option<&'a str>,
    digest_uri: &'a str,
    utf8: bool,
}

impl DigestInput<'_> {
    /// HEX(H(A1)).
    fn ha1(&self) -> Result<String, SaslError> {
        let mut inner = a1_bytes(self.username, self.utf8)?;
        inner.push(b':');
        inner.extend(a1_bytes(self.realm, self.utf8)?);
        inner.push(b':');
        inner.extend_from_slice(self.password);
        let mut a1 = md5::digest(&inner).to_vec();
        a1.push(b':');
        a1.extend_from_slice(self.nonce.as_bytes());
        a1.push(b':');
        a1.extend_from_slice(self.cnonce.as_bytes());
        if let Some(z) = self.authzid {
            a1.push(b':');
            a1.extend_from_slice(z.as_bytes());
        }
        Ok(hex(&md5::digest(&a1)))
    }

    /// The response value (`a2_prefix` "AUTHENTICATE") or the rspauth
    /// value (`a2_prefix` "").
    fn digest(&self, a2_prefix: &str) -> Result<String, SaslError> {
        let a2 = format!("{a2_prefix}:{}", self.digest_uri);
        let kd = format!(
            "{}:{}:{NONCE_COUNT}:{}:auth:{}",
            self.ha1()?,
            self.nonce,
            self.cnonce,
            hex(&md5::digest(a2.as_bytes()))
        );
        Ok(hex(&md5::digest(kd.as_bytes())))
    }
}

/// Equal in time independent of where they differ (the expected digest
/// must not leak byte by byte).
fn same(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// The qop value check shared by both sides.
fn check_qop(qop: &str) -> Result<(), SaslError> {
    if qop.eq_ignore_ascii_case("auth") {
        Ok(())
    } else {
        Err(SaslError::QopNotSupported {
            qop: qop.to_string(),
        })
    }
}

/// What a server step produced.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ServerStep {
    /// Send this challenge; the client answers with its response.
    Challenge(Vec<u8>),
    /// Authenticated: send `reply` (the `rspauth` proof); `username` is
    /// the name the client authenticated as.
    Complete { reply: Vec<u8>, username: String },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum ServerState {
    Start,
    Challenged,
    Done,
}

/// The server side of one DIGEST-MD5 exchange.
#[derive(Clone, Debug)]
pub struct DigestMd5Server {
    realm: String,
    nonce: String,
    state: ServerState,
}

impl DigestMd5Server {
    /// An exchange in `realm` with a fresh, unpredictable `nonce` the
    /// caller made (at least 16 random bytes, e.g. base64). Neither may
    /// hold a quote, a backslash or a control character.
    pub fn new(realm: &str, nonce: &str) -> Result<DigestMd5Server, SaslError> {
        for (name, value) in [("realm", realm), ("nonce", nonce)] {
            if value.is_empty() || value.bytes().any(|b| b < 0x20 || b == b'"' || b == b'\\') {
                return Err(SaslError::Refused {
                    what: "DIGEST-MD5 server",
                    name: if name == "realm" { "realm" } else { "nonce" },
                    value: value.to_string(),
                    why: "must be non-empty, without quotes, backslashes or control characters",
                });
            }
        }
        Ok(DigestMd5Server {
            realm: realm.to_string(),
            nonce: nonce.to_string(),
            state: ServerState::Start,
        })
    }

    /// The challenge this server sends.
    pub fn challenge(&self) -> Vec<u8> {
        format!(
            "realm={},nonce={},qop=\"auth\",charset=utf-8,algorithm=md5-sess",
            quote(&self.realm),
            quote(&self.nonce)
        )
        .into_bytes()
    }

    /// True once the client is authenticated.
    pub fn is_complete(&self) -> bool {
        self.state == ServerState::Done
    }

    /// Takes the client's next token. The first is DIGEST-MD5's empty
    /// initial response (answered with the challenge); the second is the
    /// digest-response, checked against the password `password_for`
    /// returns for its user name (its error refuses the exchange).
    pub fn step(
        &mut self,
        token: &[u8],
        password_for: impl FnOnce(&str) -> Result<Vec<u8>, SaslError>,
    ) -> Result<ServerStep, SaslError> {
        match self.state {
            ServerState::Start if token.is_empty() => {
                self.state = ServerState::Challenged;
                Ok(ServerStep::Challenge(self.challenge()))
            }
            ServerState::Start => Err(SaslError::State(
                "the client sent a response before the challenge (subsequent authentication is not supported)",
            )),
            ServerState::Challenged => {
                let (reply, username) = self.check_response(token, password_for)?;
                self.state = ServerState::Done;
                Ok(ServerStep::Complete { reply, username })
            }
            ServerState::Done => Err(SaslError::State(
                "a token arrived after authentication completed",
            )),
        }
    }

    fn check_response(
        &self,
        token: &[u8],
        password_for: impl FnOnce(&str) -> Result<Vec<u8>, SaslError>,
    ) -> Result<(Vec<u8>, String), SaslError> {
        const WHAT: &str = "DIGEST-MD5 response";
        let list = parse_directives(WHAT, token)?;
        let f = Fields::new(
            WHAT,
            &list,
            &[
                "username",
                "realm",
                "nonce",
                "cnonce",
                "nc",
                "qop",
                "digest-uri",
                "response",
                "maxbuf",
                "charset",
                "cipher",
                "authzid",
            ],
        )?;
        let username = f.required("username")?;
        let nonce = f.required("nonce")?;
        let cnonce = f.required("cnonce")?;
        let nc = f.required("nc")?;
        let digest_uri = f.required("digest-uri")?;
        let response = f.required("response")?;
        let refused = |name: &'static str, value: &str, why: &'static str| SaslError::Refused {
            what: WHAT,
            name,
            value: value.to_string(),
            why,
        };
        check_qop(f.get("qop").unwrap_or("auth"))?;
        if !same(nonce.as_bytes(), self.nonce.as_bytes()) {
            return Err(refused(
                "nonce",
                nonce,
                "it is not the nonce of this challenge",
            ));
        }
        let realm = f.get("realm").unwrap_or(&self.realm);
        if realm != self.realm {
            return Err(refused("realm", realm, "it is not this server's realm"));
        }
        if nc != NONCE_COUNT {
            return Err(refused(
                "nc",
                nc,
                "only the first authentication (00000001) is supported",
            ));
        }
        if cnonce.is_empty() {
            return Err(refused("cnonce", cnonce, "it is empty"));
        }
        let utf8 = match f.get("charset") {
            None => false,
            Some(c) if c.eq_ignore_ascii_case("utf-8") => true,
            Some(c) => return Err(refused("charset", c, "only utf-8 is defined")),
        };
        if let Some(z) = f.get("authzid")
            && z != username
        {
            return Err(refused(
                "authzid",
                z,
                "a token authenticates its own user only",
            ));
        }
        if response.len() != 32 || !response.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(refused("response", response, "it is not 32 hex digits"));
        }
        let password = password_for(username)?;
        let input = DigestInput {
            username,
            realm,
            password: &password,
            nonce,
            cnonce,
            authzid: f.get("authzid"),
            digest_uri,
            utf8,
        };
        let expected = input.digest("AUTHENTICATE")?;
        if !same(
            expected.as_bytes(),
            response.to_ascii_lowercase().as_bytes(),
        ) {
            return Err(SaslError::BadResponse);
        }
        let rspauth = format!("rspauth={}", input.digest("")?);
        Ok((rspauth.into_bytes(), username.to_string()))
    }
}

/// The client side of one DIGEST-MD5 exchange (tests, Rust callers).
#[derive(Clone, Debug)]
pub struct DigestMd5Client {
    username: String,
    password: Vec<u8>,
    cnonce: String,
    digest_uri: String,
    expected_rspauth: Option<String>,
}

impl DigestMd5Client {
    /// A client for `username` and `password` with a fresh `cnonce` the
    /// caller made; HBase's digest-uri is `null/default` (no protocol,
    /// server name "default").
    pub fn new(username: &str, password: &[u8], cnonce: &str, digest_uri: &str) -> DigestMd5Client {
        DigestMd5Client {
            username: username.to_string(),
            password: password.to_vec(),
            cnonce: cnonce.to_string(),
            digest_uri: digest_uri.to_string(),
            expected_rspauth: None,
        }
    }

    /// The digest-response to a server's challenge.
    pub fn respond(&mut self, challenge: &[u8]) -> Result<Vec<u8>, SaslError> {
        const WHAT: &str = "DIGEST-MD5 challenge";
        let list = parse_directives(WHAT, challenge)?;
        let f = Fields::new(
            WHAT,
            &list,
            &["nonce", "qop", "charset", "algorithm", "maxbuf", "stale"],
        )?;
        let nonce = f.required("nonce")?;
        let algorithm = f.required("algorithm")?;
        if !algorithm.eq_ignore_ascii_case("md5-sess") {
            return Err(SaslError::Refused {
                what: WHAT,
                name: "algorithm",
                value: algorithm.to_string(),
                why: "only md5-sess is defined",
            });
        }
        let offered = f.get("qop").unwrap_or("auth");
        if !offered
            .split(',')
            .any(|q| q.trim().eq_ignore_ascii_case("auth"))
        {
            return Err(SaslError::QopNotSupported {
                qop: offered.to_string(),
            });
        }
        let realm = f.get("realm").unwrap_or_default();
        let utf8 = f
            .get("charset")
            .is_some_and(|c| c.eq_ignore_ascii_case("utf-8"));
        let input = DigestInput {
            username: &self.username,
            realm,
            password: &self.password,
            nonce,
            cnonce: &self.cnonce,
            authzid: None,
            digest_uri: &self.digest_uri,
            utf8,
        };
        let response = input.digest("AUTHENTICATE")?;
        self.expected_rspauth = Some(input.digest("")?);
        let charset = if utf8 { "charset=utf-8," } else { "" };
        Ok(format!(
            "{charset}username={},realm={},nonce={},nc={NONCE_COUNT},cnonce={},digest-uri={},maxbuf=65536,response={response},qop=auth",
            quote(&self.username),
            quote(realm),
            quote(nonce),
            quote(&self.cnonce),
            quote(&self.digest_uri),
        )
        .into_bytes())
    }

    /// Checks the server's final `rspauth=` proof.
    pub fn verify(&self, reply: &[u8]) -> Result<(), SaslError> {
        const WHAT: &str = "DIGEST-MD5 final reply";
        let Some(expected) = &self.expected_rspauth else {
            return Err(SaslError::State(
                "the server's proof arrived before the challenge",
            ));
        };
        let list = parse_directives(WHAT, reply)?;
        let f = Fields::new(WHAT, &list, &["rspauth"])?;
        let got = f.required("rspauth")?;
        if same(got.to_ascii_lowercase().as_bytes(), expected.as_bytes()) {
            Ok(())
        } else {
            Err(SaslError::BadServerProof)
        }
    }
}
