//! Which connector owns a listening address. A connector that listens (the webhook source) claims its
//! `host:port`; the herder refuses a config whose address another connector or one of the worker's own
//! listeners already holds, and at start-up the connector created first keeps an address that two stored
//! connectors claim.

use std::net::{IpAddr, SocketAddr};

/// The host part of a listening address.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Host {
    /// `0.0.0.0` or `::`: every address of the machine.
    Any,
    /// One address.
    Ip(IpAddr),
    /// A name, lowercase (not resolved: validation does no I/O). `localhost` counts as the loopback
    /// addresses.
    Name(String),
}

/// A `host:port` a connector or the worker listens on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Address {
    host: Host,
    port: u16,
}

impl Address {
    /// Reads `host:port` (`[v6]:port` for IPv6); `None` when it is not of that form.
    pub(crate) fn parse(hostport: &str) -> Option<Address> {
        let (host, port) = hostport.trim().rsplit_once(':')?;
        let port = port.parse::<u16>().ok()?;
        let host = host.trim_start_matches('[').trim_end_matches(']');
        if host.is_empty() {
            return None;
        }
        let host = match host.parse::<IpAddr>() {
            Ok(ip) if ip.is_unspecified() => Host::Any,
            Ok(ip) => Host::Ip(ip),
            Err(_) => Host::Name(host.to_ascii_lowercase()),
        };
        Some(Address { host, port })
    }

    /// The address a socket is bound to.
    pub(crate) fn bound(addr: SocketAddr) -> Address {
        let ip = addr.ip();
        Address {
            host: if ip.is_unspecified() {
                Host::Any
            } else {
                Host::Ip(ip)
            },
            port: addr.port(),
        }
    }

    /// Whether binding both would clash: the same port (not 0, which picks a free one) on the same host,
    /// or on any host when either is a wildcard address.
    pub(crate) fn clashes(&self, other: &Address) -> bool {
        if self.port == 0 || self.port != other.port {
            return false;
        }
        match (&self.host, &other.host) {
            (Host::Any, _) | (_, Host::Any) => true,
            (Host::Ip(a), Host::Ip(b)) => a == b,
            (Host::Name(a), Host::Name(b)) => a == b,
            (Host::Name(name), Host::Ip(ip)) | (Host::Ip(ip), Host::Name(name)) => {
                name == "localhost" && ip.is_loopback()
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn clash(a: &str, b: &str) -> bool {
        let (a, b) = (Address::parse(a).unwrap(), Address::parse(b).unwrap());
        assert_eq!(a.clashes(&b), b.clashes(&a), "{a:?} {b:?}");
        a.clashes(&b)
    }

    #[test]
    fn addresses_clash_on_the_same_port_of_the_same_host_or_a_wildcard() {
        assert!(clash("127.0.0.1:8090", "127.0.0.1:8090"));
        assert!(!clash("127.0.0.1:8090", "127.0.0.1:8091"));
        assert!(!clash("127.0.0.1:8090", "127.0.0.2:8090"));
        assert!(clash("0.0.0.0:8090", "127.0.0.1:8090"));
        assert!(clash("[::]:8090", "10.1.2.3:8090"));
        assert!(clash("0.0.0.0:8090", "hooks.example:8090"));
        assert!(clash("localhost:8090", "127.0.0.1:8090"));
        assert!(clash("localhost:8090", "[::1]:8090"));
        assert!(clash("Hooks.Example:8090", "hooks.example:8090"));
        assert!(!clash("localhost:8090", "10.1.2.3:8090"));
        assert!(!clash("0.0.0.0:0", "0.0.0.0:0"));
        assert!(Address::parse("no-port").is_none());
        assert!(Address::parse(":80").is_none());
    }

    #[test]
    fn a_bound_wildcard_holds_its_port_on_every_host() {
        let bound = Address::bound("0.0.0.0:8083".parse().unwrap());
        assert!(bound.clashes(&Address::parse("127.0.0.1:8083").unwrap()));
        assert!(!bound.clashes(&Address::parse("127.0.0.1:8084").unwrap()));
    }
}
