//! Q4_0 weights, the 4-bit format of the e5 container: blocks of 32 weights sharing one f16 scale.
//!
//! The browser's model file keeps the container's blocks as they are, so both encoders dequantise the very same
//! bytes and their vectors agree exactly.

/// Weights per Q4_0 block.
pub const QK: usize = 32;
/// Bytes per Q4_0 block: an f16 scale and 16 bytes of nibbles.
pub const Q4_BLOCK_BYTES: usize = 18;

/// Bytes of `weights` Q4_0 weights (a multiple of [`QK`]).
pub fn q4_bytes(weights: usize) -> usize {
    weights / QK * Q4_BLOCK_BYTES
}

/// IEEE half to single precision (exact; subnormals included).
pub fn f16_to_f32(h: u16) -> f32 {
    let sign = ((h & 0x8000) as u32) << 16;
    let exp = ((h >> 10) & 0x1f) as u32;
    let man = (h & 0x3ff) as u32;
    let bits = match (exp, man) {
        (0, 0) => sign,
        (0, _) => {
            // Subnormal: value = man × 2^-24, exactly representable in f32.
            let v = man as f32 * (1.0 / 16_777_216.0);
            return if sign != 0 { -v } else { v };
        }
        (31, _) => sign | 0x7f80_0000 | (man << 13),
        _ => sign | ((exp + 127 - 15) << 23) | (man << 13),
    };
    f32::from_bits(bits)
}

/// Dequantises consecutive Q4_0 blocks into `out` (`out.len()` = 32 × blocks). Within a block byte `j` holds
/// weight `j` in its low nibble and weight `j + 16` in its high nibble; each weight is `(nibble - 8) × scale`.
pub fn dequantize_q4(blocks: &[u8], out: &mut [f32]) {
    for (b, o) in blocks
        .chunks_exact(Q4_BLOCK_BYTES)
        .zip(out.chunks_exact_mut(QK))
    {
        let d = f16_to_f32(u16::from_le_bytes([b[0], b[1]]));
        for j in 0..16 {
            let q = b[2 + j];
            o[j] = ((q & 0x0f) as i32 - 8) as f32 * d;
            o[j + 16] = ((q >> 4) as i32 - 8) as f32 * d;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn f16_conversion() {
        assert_eq!(f16_to_f32(0x3c00), 1.0);
        assert_eq!(f16_to_f32(0xc000), -2.0);
        assert_eq!(f16_to_f32(0x0001), 5.960_464_5e-8);
        assert_eq!(f16_to_f32(0x7bff), 65504.0);
        assert!(f16_to_f32(0x7c00).is_infinite());
    }

    #[test]
    fn q4_block_layout() {
        let mut block = vec![0x00, 0x3c]; // scale 1.0
        block.extend((0..16u8).map(|j| (j & 0x0f) | (15 - j) << 4));
        let mut out = [0f32; 32];
        dequantize_q4(&block, &mut out);
        assert_eq!(out[0], -8.0);
        assert_eq!(out[15], 7.0);
        assert_eq!(out[16], 7.0);
        assert_eq!(out[31], -8.0);
    }
}
