//! Feeds arbitrary bytes to the key store decoders a TLS setting points
//! at: Java's JKS format (with a password, so digests and key recovery
//! run, and without one) and PKCS12. A store file is outside bytes too:
//! every path must return an error, never panic or allocate from an
//! unchecked length.
#![no_main]

use ferrobase_tls::jks;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = jks::decode(data, Some("changeit"));
    let _ = jks::decode(data, None);
    let _ = p12_keystore::KeyStore::from_pkcs12(
        data,
        "changeit",
        p12_keystore::Pkcs12ImportPolicy::Relaxed,
    );
});
