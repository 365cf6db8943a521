//! LEB128 varints for the compact parts of bundles (BM25 postings, HNSW links): 7 bits per byte, high bit set
//! on all but the last byte. Small numbers (gaps between sorted ids) take one or two bytes.

pub(crate) fn write_varint(out: &mut Vec<u8>, mut value: u32) {
    while value >= 0x80 {
        out.push((value as u8) | 0x80);
        value >>= 7;
    }
    out.push(value as u8);
}

#[inline]
pub(crate) fn read_varint(bytes: &mut &[u8]) -> u32 {
    let mut value = 0u32;
    let mut shift = 0;
    loop {
        let byte = bytes[0];
        *bytes = &bytes[1..];
        value |= u32::from(byte & 0x7f) << shift;
        if byte < 0x80 {
            return value;
        }
        shift += 7;
    }
}

/// [`read_varint`] that reports truncation or overflow instead of panicking.
pub(crate) fn read_varint_checked(bytes: &mut &[u8]) -> Option<u32> {
    let mut value = 0u32;
    for shift in (0..35).step_by(7) {
        let (&byte, rest) = bytes.split_first()?;
        *bytes = rest;
        if shift == 28 && byte & 0x70 != 0 {
            return None;
        }
        value |= u32::from(byte & 0x7f) << shift;
        if byte < 0x80 {
            return Some(value);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varints_round_trip() {
        let mut buf = Vec::new();
        for v in [0, 1, 127, 128, 300, 16_384, u32::MAX] {
            write_varint(&mut buf, v);
        }
        let mut bytes = buf.as_slice();
        let mut checked = buf.as_slice();
        let back: Vec<u32> = (0..7).map(|_| read_varint(&mut bytes)).collect();
        assert_eq!(back, [0, 1, 127, 128, 300, 16_384, u32::MAX]);
        assert!(bytes.is_empty());
        let back: Vec<u32> = (0..7)
            .map(|_| read_varint_checked(&mut checked).unwrap())
            .collect();
        assert_eq!(back, [0, 1, 127, 128, 300, 16_384, u32::MAX]);
        assert_eq!(read_varint_checked(&mut &[0x80u8][..]), None);
        assert_eq!(
            read_varint_checked(&mut &[0xff, 0xff, 0xff, 0xff, 0x1f][..]),
            None
        );
        assert_eq!(
            read_varint_checked(&mut &[0xff, 0xff, 0xff, 0xff, 0xff, 0x01][..]),
            None
        );
    }
}
