//! The archive's own directory, read byte by byte before the zip reader is trusted with
//! it: every central-directory record (ZIP64 included), each checked against the local
//! header it points at. A name twice, a local header that says another name, size,
//! method or flags than the directory, entries whose data overlap, or a directory the
//! zip reader sees differently are refused: the entry unpacked here must be the entry
//! any other tool would unpack.

use super::PackError;

/// One entry as the central directory records it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Record {
    /// The name's bytes.
    pub name: Vec<u8>,
    /// General-purpose flags.
    pub flags: u16,
    /// Compression method.
    pub method: u16,
    /// CRC-32.
    pub crc: u32,
    /// Compressed size.
    pub packed: u64,
    /// Unpacked size.
    pub size: u64,
    /// Where its local header starts.
    pub offset: u64,
}

const EOCD: u32 = 0x0605_4b50;
const ZIP64_LOCATOR: u32 = 0x0706_4b50;
const ZIP64_EOCD: u32 = 0x0606_4b50;
const CENTRAL: u32 = 0x0201_4b50;
const LOCAL: u32 = 0x0403_4b50;
/// Bit 3: sizes and CRC follow the data in a descriptor (the local header may hold 0).
const DESCRIPTOR: u16 = 1 << 3;

fn bad(why: impl Into<String>) -> PackError {
    PackError::BadArchive(why.into())
}

/// Little-endian reads that fail instead of panicking past the end.
struct At<'a> {
    bytes: &'a [u8],
}

impl At<'_> {
    fn slice(&self, at: u64, len: u64) -> Result<&[u8], PackError> {
        let start = usize::try_from(at).map_err(|_| bad("an offset past the end"))?;
        let len = usize::try_from(len).map_err(|_| bad("a length past the end"))?;
        start
            .checked_add(len)
            .and_then(|end| self.bytes.get(start..end))
            .ok_or_else(|| bad("a record runs past the end of the archive"))
    }
    fn u16(&self, at: u64) -> Result<u16, PackError> {
        let b = self.slice(at, 2)?;
        Ok(u16::from_le_bytes([b[0], b[1]]))
    }
    fn u32(&self, at: u64) -> Result<u32, PackError> {
        let b = self.slice(at, 4)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }
    fn u64(&self, at: u64) -> Result<u64, PackError> {
        let b = self.slice(at, 8)?;
        let mut a = [0u8; 8];
        a.copy_from_slice(b);
        Ok(u64::from_le_bytes(a))
    }
}

/// The ZIP64 extra field (id 1) of `extra`, read for the fields whose 32-bit value is
/// saturated, in the order the format gives: size, packed size, offset.
fn zip64(extra: &[u8], wants: [bool; 3], mut values: [u64; 3]) -> Result<[u64; 3], PackError> {
    if !wants.iter().any(|&w| w) {
        return Ok(values);
    }
    let at = At { bytes: extra };
    let mut i = 0u64;
    while i + 4 <= extra.len() as u64 {
        let id = at.u16(i)?;
        let len = u64::from(at.u16(i + 2)?);
        if id == 1 {
            let mut j = i + 4;
            for (k, want) in wants.iter().enumerate() {
                if *want {
                    if j + 8 > i + 4 + len {
                        return Err(bad("a ZIP64 field is shorter than its record needs"));
                    }
                    values[k] = at.u64(j)?;
                    j += 8;
                }
            }
            return Ok(values);
        }
        i += 4 + len;
    }
    Err(bad("a ZIP64 size or offset has no ZIP64 field"))
}

/// Every central-directory record of the archive `bytes`, each checked against its
/// local header, in directory order.
/// `max` bounds the number of entries (more are refused before any is read).
pub(crate) fn records(bytes: &[u8], max: usize) -> Result<Vec<Record>, PackError> {
    let at = At { bytes };
    let len = bytes.len() as u64;
    // The end record: 22 bytes and a comment that runs exactly to the end.
    let from = len.saturating_sub(22 + 65_535);
    let mut end = None;
    let mut i = len
        .checked_sub(22)
        .ok_or_else(|| bad("too short to be a zip"))?;
    loop {
        if at.u32(i)? == EOCD && i + 22 + u64::from(at.u16(i + 20)?) == len {
            end = Some(i);
            break;
        }
        if i == from {
            break;
        }
        i -= 1;
    }
    let end = end.ok_or_else(|| bad("no end-of-directory record"))?;
    let mut count = u64::from(at.u16(end + 10)?);
    let mut cd_size = u64::from(at.u32(end + 12)?);
    let mut cd_at = u64::from(at.u32(end + 16)?);
    if at.u16(end + 4)? != 0 || at.u16(end + 6)? != 0 {
        return Err(bad("a split (multi-disk) archive"));
    }
    if end >= 20 && at.u32(end - 20)? == ZIP64_LOCATOR {
        let z = at.u64(end - 12)?;
        if at.u32(z)? != ZIP64_EOCD {
            return Err(bad("the ZIP64 locator points at no ZIP64 record"));
        }
        count = at.u64(z + 32)?;
        cd_size = at.u64(z + 40)?;
        cd_at = at.u64(z + 48)?;
    }
    let cd_end = cd_at
        .checked_add(cd_size)
        .filter(|&e| e <= end)
        .ok_or_else(|| bad("the directory runs past its end record"))?;
    // A record is at least 46 bytes: the count cannot claim more than fit.
    if count > cd_size / 46 {
        return Err(bad(format!(
            "the directory claims {count} entries in {cd_size} bytes"
        )));
    }
    if count > max as u64 {
        return Err(PackError::TooBig {
            what: format!("the archive has {count} entries; a pack may have at most {max}"),
        });
    }
    let mut out = Vec::new();
    let mut p = cd_at;
    for _ in 0..count {
        if at.u32(p)? != CENTRAL {
            return Err(bad("the directory holds fewer entries than it declares"));
        }
        let flags = at.u16(p + 8)?;
        let method = at.u16(p + 10)?;
        let crc = at.u32(p + 16)?;
        let packed32 = at.u32(p + 20)?;
        let size32 = at.u32(p + 24)?;
        let n = u64::from(at.u16(p + 28)?);
        let e = u64::from(at.u16(p + 30)?);
        let c = u64::from(at.u16(p + 32)?);
        let offset32 = at.u32(p + 42)?;
        let name = at.slice(p + 46, n)?.to_vec();
        let extra = at.slice(p + 46 + n, e)?;
        let [size, packed, offset] = zip64(
            extra,
            [
                size32 == u32::MAX,
                packed32 == u32::MAX,
                offset32 == u32::MAX,
            ],
            [u64::from(size32), u64::from(packed32), u64::from(offset32)],
        )?;
        out.push(Record {
            name,
            flags,
            method,
            crc,
            packed,
            size,
            offset,
        });
        p += 46 + n + e + c;
        if p > cd_end {
            return Err(bad("a directory record runs past the directory"));
        }
    }
    if p != cd_end {
        return Err(bad("the directory holds more than its declared entries"));
    }
    // Each entry's data lies before the next entry's header and before the directory:
    // no two entries share bytes.
    let mut spans: Vec<(u64, u64, usize)> = Vec::with_capacity(out.len());
    for (k, r) in out.iter().enumerate() {
        let data_end = local(&at, r)?;
        spans.push((r.offset, data_end, k));
    }
    spans.sort_unstable();
    for w in spans.windows(2) {
        if w[0].1 > w[1].0 {
            return Err(PackError::BadName {
                name: crate::rules::echo(&String::from_utf8_lossy(&out[w[1].2].name)),
                reason: "shares its bytes with another entry of the archive".into(),
            });
        }
    }
    if spans.last().is_some_and(|s| s.1 > cd_at) {
        return Err(bad("an entry's data runs into the archive's directory"));
    }
    Ok(out)
}

/// Check `r`'s local header against the directory; where its data ends.
fn local(at: &At<'_>, r: &Record) -> Result<u64, PackError> {
    let shown = || crate::rules::echo(&String::from_utf8_lossy(&r.name));
    let differs = |what: &str| PackError::BadName {
        name: shown(),
        reason: format!(
            "its local header gives another {what} than the archive's directory; an archive whose two records of an entry disagree is refused"
        ),
    };
    if at.u32(r.offset)? != LOCAL {
        return Err(PackError::BadName {
            name: shown(),
            reason: "the archive's directory points at no local header for it".into(),
        });
    }
    let flags = at.u16(r.offset + 6)?;
    let method = at.u16(r.offset + 8)?;
    let crc = at.u32(r.offset + 14)?;
    let packed32 = at.u32(r.offset + 18)?;
    let size32 = at.u32(r.offset + 22)?;
    let n = u64::from(at.u16(r.offset + 26)?);
    let e = u64::from(at.u16(r.offset + 28)?);
    if at.slice(r.offset + 30, n)? != r.name.as_slice() {
        return Err(differs("name"));
    }
    if flags != r.flags {
        return Err(differs("set of flags"));
    }
    if method != r.method {
        return Err(differs("compression method"));
    }
    let extra = at.slice(r.offset + 30 + n, e)?;
    let wants = [size32 == u32::MAX, packed32 == u32::MAX, false];
    let [size, packed, _] = zip64(extra, wants, [u64::from(size32), u64::from(packed32), 0])?;
    let deferred = flags & DESCRIPTOR != 0;
    // With a data descriptor the local header may hold zeros; anything else must match.
    let same = |local: u64, central: u64| local == central || (deferred && local == 0);
    if !same(size, r.size) || !same(packed, r.packed) {
        return Err(differs("size"));
    }
    if !same(u64::from(crc), u64::from(r.crc)) {
        return Err(differs("checksum"));
    }
    let data = r.offset + 30 + n + e;
    data.checked_add(r.packed)
        .filter(|&end| end <= at.bytes.len() as u64)
        .ok_or_else(|| PackError::BadName {
            name: shown(),
            reason: "its data runs past the end of the archive".into(),
        })
}
