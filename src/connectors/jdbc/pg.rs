//! PostgreSQL's wire values: reading any column the type mapping knows from its binary form, binding any
//! parameter in text form (the column's own input function parses it), and TLS through rustls.

use std::error::Error;
use std::sync::Arc;

use bytes::BytesMut;
use postgres::types::{Format, FromSql, IsNull, ToSql, Type};

use super::types::{Param, Raw};

type BoxError = Box<dyn Error + Sync + Send>;

/// Microseconds from 1970-01-01 to PostgreSQL's epoch, 2000-01-01.
const PG_EPOCH_MICROS: i64 = 946_684_800_000_000;
/// Days from 1970-01-01 to 2000-01-01.
const PG_EPOCH_DAYS: i32 = 10_957;

/// One cell of a result row.
pub struct Cell(pub Raw);

fn be<const N: usize>(raw: &[u8]) -> Result<[u8; N], BoxError> {
    raw.get(..N)
        .and_then(|s| s.try_into().ok())
        .ok_or_else(|| "short value".into())
}

impl<'a> FromSql<'a> for Cell {
    fn from_sql(ty: &Type, raw: &'a [u8]) -> Result<Self, BoxError> {
        Ok(Cell(match ty.name() {
            "bool" => Raw::Bool(raw.first().is_some_and(|b| *b != 0)),
            "int2" => Raw::Int(i16::from_be_bytes(be(raw)?) as i64),
            "int4" => Raw::Int(i32::from_be_bytes(be(raw)?) as i64),
            "oid" => Raw::Int(u32::from_be_bytes(be(raw)?) as i64),
            "int8" => Raw::Int(i64::from_be_bytes(be(raw)?)),
            "float4" => Raw::Float(f32::from_be_bytes(be(raw)?) as f64),
            "float8" => Raw::Float(f64::from_be_bytes(be(raw)?)),
            "numeric" => Raw::Text(numeric_text(raw)?),
            "bytea" => Raw::Bytes(raw.to_vec()),
            "jsonb" => Raw::Text(String::from_utf8(raw.get(1..).unwrap_or(&[]).to_vec())?),
            "uuid" => Raw::Text(uuid::Uuid::from_bytes(be(raw)?).hyphenated().to_string()),
            "date" => Raw::Date(i32::from_be_bytes(be(raw)?).saturating_add(PG_EPOCH_DAYS)),
            "time" => Raw::Time(i64::from_be_bytes(be(raw)?)),
            "timetz" => {
                let micros = i64::from_be_bytes(be(raw)?);
                let west = i32::from_be_bytes(be(raw.get(8..).unwrap_or(&[]))?) as i64;
                Raw::Time((micros + west * 1_000_000).rem_euclid(86_400_000_000))
            }
            "timestamp" | "timestamptz" => {
                let micros = i64::from_be_bytes(be(raw)?);
                Raw::Timestamp(micros.saturating_add(PG_EPOCH_MICROS).saturating_mul(1000))
            }
            "bit" => Raw::Bool(raw.get(4).is_some_and(|b| b & 0x80 != 0)),
            "money" => Raw::Float(i64::from_be_bytes(be(raw)?) as f64 / 100.0),
            _ => Raw::Text(String::from_utf8_lossy(raw).into_owned()),
        }))
    }

    fn from_sql_null(_: &Type) -> Result<Self, BoxError> {
        Ok(Cell(Raw::Null))
    }

    fn accepts(_: &Type) -> bool {
        true
    }
}

/// The decimal text of a binary `numeric`.
fn numeric_text(raw: &[u8]) -> Result<String, BoxError> {
    let word = |i: usize| -> Result<u16, BoxError> {
        Ok(u16::from_be_bytes(be(raw.get(i * 2..).unwrap_or(&[]))?))
    };
    let ndigits = word(0)? as i32;
    let weight = word(1)? as i16 as i32;
    let sign = word(2)?;
    let dscale = word(3)? as usize;
    if sign == 0xC000 {
        return Ok("NaN".into());
    }
    let digit = |i: i32| -> Result<u16, BoxError> {
        if i < 0 || i >= ndigits {
            Ok(0)
        } else {
            word(4 + i as usize)
        }
    };
    let mut out = String::new();
    if sign == 0x4000 {
        out.push('-');
    }
    if weight < 0 {
        out.push('0');
    } else {
        out.push_str(&digit(0)?.to_string());
        for i in 1..=weight {
            out.push_str(&format!("{:04}", digit(i)?));
        }
    }
    if dscale > 0 {
        let mut frac = String::new();
        let mut k = weight + 1;
        while frac.len() < dscale {
            frac.push_str(&format!("{:04}", digit(k)?));
            k += 1;
        }
        frac.truncate(dscale);
        out.push('.');
        out.push_str(&frac);
    }
    Ok(out)
}

/// A parameter bound in text format, whatever the column's type.
#[derive(Debug)]
pub struct TextParam(pub Option<String>);

impl TextParam {
    /// The text form of a sink parameter.
    pub fn of(p: &Param) -> Self {
        TextParam(p.pg_text())
    }
}

impl ToSql for TextParam {
    fn to_sql(&self, _ty: &Type, out: &mut BytesMut) -> Result<IsNull, BoxError> {
        match &self.0 {
            None => Ok(IsNull::Yes),
            Some(s) => {
                out.extend_from_slice(s.as_bytes());
                Ok(IsNull::No)
            }
        }
    }

    fn accepts(_: &Type) -> bool {
        true
    }

    fn encode_format(&self, _ty: &Type) -> Format {
        Format::Text
    }

    postgres::types::to_sql_checked!();
}

/// libpq's `sslmode` values.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SslMode {
    Disable,
    Prefer,
    Require,
    VerifyCa,
    VerifyFull,
}

impl SslMode {
    /// The mode of a URL's `sslmode` (default `prefer`, as libpq and PgJDBC).
    pub fn parse(s: Option<&str>) -> Result<Self, String> {
        Ok(match s.unwrap_or("prefer") {
            "disable" => SslMode::Disable,
            "allow" | "prefer" => SslMode::Prefer,
            "require" => SslMode::Require,
            "verify-ca" => SslMode::VerifyCa,
            "verify-full" => SslMode::VerifyFull,
            other => return Err(format!("Invalid sslmode value: {other}")),
        })
    }
}

/// The rustls connector for `mode`: certificates checked against `root_cert` (a PEM file) or the
/// WebPKI roots for `verify-ca`/`verify-full`, not checked for `prefer`/`require` (libpq's meaning).
pub fn tls(
    mode: SslMode,
    root_cert: Option<&str>,
) -> Result<tokio_postgres_rustls::MakeRustlsConnect, String> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder = rustls::ClientConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .map_err(|e| e.to_string())?;
    let config = if matches!(mode, SslMode::VerifyCa | SslMode::VerifyFull) {
        let mut roots = rustls::RootCertStore::empty();
        match root_cert {
            Some(path) => {
                let pem = std::fs::read(path)
                    .map_err(|e| format!("Cannot read sslrootcert {path}: {e}"))?;
                for cert in rustls_pki_types::pem::PemObject::pem_slice_iter(&pem) {
                    let cert: rustls_pki_types::CertificateDer<'static> =
                        cert.map_err(|e| e.to_string())?;
                    roots.add(cert).map_err(|e| e.to_string())?;
                }
            }
            None => roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned()),
        }
        builder.with_root_certificates(roots).with_no_client_auth()
    } else {
        builder
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(NoVerify(provider)))
            .with_no_client_auth()
    };
    Ok(tokio_postgres_rustls::MakeRustlsConnect::new(config))
}

/// Accepts any server certificate (`sslmode=require`: encryption without authentication, as libpq).
#[derive(Debug)]
struct NoVerify(Arc<rustls::crypto::CryptoProvider>);

impl rustls::client::danger::ServerCertVerifier for NoVerify {
    fn verify_server_cert(
        &self,
        _: &rustls_pki_types::CertificateDer<'_>,
        _: &[rustls_pki_types::CertificateDer<'_>],
        _: &rustls_pki_types::ServerName<'_>,
        _: &[u8],
        _: rustls_pki_types::UnixTime,
    ) -> Result<rustls::client::danger::ServerCertVerified, rustls::Error> {
        Ok(rustls::client::danger::ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &rustls_pki_types::CertificateDer<'_>,
        dss: &rustls::DigitallySignedStruct,
    ) -> Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &rustls_pki_types::CertificateDer<'_>,
        dss: &rustls::DigitallySignedStruct,
    ) -> Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<rustls::SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn numeric(ndigits: u16, weight: i16, sign: u16, dscale: u16, digits: &[u16]) -> Vec<u8> {
        let mut v = Vec::new();
        for w in [ndigits, weight as u16, sign, dscale].iter().chain(digits) {
            v.extend_from_slice(&w.to_be_bytes());
        }
        v
    }

    #[test]
    fn numeric_binary_to_text() {
        // 12345.678 = [1, 2345, 6780], weight 1, dscale 3
        assert_eq!(
            numeric_text(&numeric(3, 1, 0, 3, &[1, 2345, 6780])).unwrap(),
            "12345.678"
        );
        assert_eq!(
            numeric_text(&numeric(1, -1, 0x4000, 2, &[500])).unwrap(),
            "-0.05"
        );
        assert_eq!(numeric_text(&numeric(1, 1, 0, 0, &[1])).unwrap(), "10000");
        assert_eq!(numeric_text(&numeric(0, 0, 0, 0, &[])).unwrap(), "0");
    }
}
