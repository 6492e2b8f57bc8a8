//! IP networks, for `TRUSTED_PROXIES`.

use std::{
    fmt,
    net::{IpAddr, Ipv4Addr, Ipv6Addr},
    str::FromStr,
};

/// An IP network: an address and a prefix length (`10.0.0.0/8`,
/// `::1/128`); a bare address is a network of one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IpNet {
    addr: IpAddr,
    prefix: u8,
}

impl IpNet {
    pub(crate) fn loopback_v4() -> Self {
        IpNet {
            addr: IpAddr::V4(Ipv4Addr::new(127, 0, 0, 0)),
            prefix: 8,
        }
    }

    pub(crate) fn loopback_v6() -> Self {
        IpNet {
            addr: IpAddr::V6(Ipv6Addr::LOCALHOST),
            prefix: 128,
        }
    }

    /// The prefix length (`0` for a network of every address).
    pub fn prefix_len(&self) -> u8 {
        self.prefix
    }

    /// Whether `ip` is in this network (an IPv4-mapped IPv6 address counts
    /// as its IPv4 address).
    pub fn contains(&self, ip: IpAddr) -> bool {
        let ip = match ip {
            IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(ip, IpAddr::V4),
            v4 => v4,
        };
        match (self.addr, ip) {
            (IpAddr::V4(net), IpAddr::V4(ip)) => {
                let mask = u32::MAX
                    .checked_shl(32 - u32::from(self.prefix))
                    .unwrap_or(0);
                u32::from(net) & mask == u32::from(ip) & mask
            }
            (IpAddr::V6(net), IpAddr::V6(ip)) => {
                let mask = u128::MAX
                    .checked_shl(128 - u32::from(self.prefix))
                    .unwrap_or(0);
                u128::from(net) & mask == u128::from(ip) & mask
            }
            _ => false,
        }
    }
}

impl FromStr for IpNet {
    type Err = InvalidIpNet;

    fn from_str(s: &str) -> Result<Self, InvalidIpNet> {
        let (addr, prefix) = match s.split_once('/') {
            Some((a, p)) => (a, Some(p)),
            None => (s, None),
        };
        let addr: IpAddr = addr.parse().map_err(|_| InvalidIpNet)?;
        let max = if addr.is_ipv4() { 32 } else { 128 };
        let prefix = match prefix {
            Some(p) => p.parse::<u8>().map_err(|_| InvalidIpNet)?,
            None => max,
        };
        if prefix > max {
            return Err(InvalidIpNet);
        }
        Ok(IpNet { addr, prefix })
    }
}

impl fmt::Display for IpNet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.addr, self.prefix)
    }
}

/// Text that is not an IP address or CIDR block.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InvalidIpNet;

impl fmt::Display for InvalidIpNet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("not an IP address or CIDR block")
    }
}

impl std::error::Error for InvalidIpNet {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn contains() {
        let net: IpNet = "10.0.0.0/8".parse().expect("net");
        assert!(net.contains("10.1.2.3".parse().expect("ip")));
        assert!(!net.contains("11.0.0.1".parse().expect("ip")));
        assert!(net.contains("::ffff:10.0.0.1".parse().expect("ip")));
        let one: IpNet = "192.168.1.1".parse().expect("net");
        assert!(one.contains("192.168.1.1".parse().expect("ip")));
        assert!(!one.contains("192.168.1.2".parse().expect("ip")));
        let all: IpNet = "0.0.0.0/0".parse().expect("net");
        assert!(all.contains("8.8.8.8".parse().expect("ip")));
        assert!("1.2.3.4/33".parse::<IpNet>().is_err());
        assert!(IpNet::loopback_v6().contains("::1".parse().expect("ip")));
    }
}
