"""`tf.audio` WAV codecs against real TensorFlow: identical bytes, values, sample rates and errors."""

import numpy as np
import pytest

import tapeshim
from oracle import check, check_raises, real_tf

RNG = np.random.default_rng(4)
STEREO = np.clip(RNG.normal(0, 0.4, (50, 2)), -1.2, 1.2).astype(np.float32)
STEREO[:4] = [[1.0, -1.0], [0.5, -0.25], [1.5, -2.0], [0.0, 3e-5]]
WAV = real_tf.audio.encode_wav(STEREO, 16000).numpy()


def test_encode_wav_bytes_match_tf():
    for audio, rate in ((STEREO, 16000), (STEREO[:, :1], 8000), (STEREO[:0], 44100)):
        expected = real_tf.audio.encode_wav(audio, rate).numpy()
        assert tapeshim.audio.encode_wav(audio, rate).numpy() == expected
    check(lambda tf: tf.audio.encode_wav(STEREO, tf.constant(22050)).dtype)


@pytest.mark.parametrize("channels,samples", [(-1, -1), (1, -1), (3, -1), (-1, 10), (2, 80), (1, 0)])
def test_decode_wav_matches_tf(channels, samples):
    check(lambda tf: tf.audio.decode_wav(WAV, desired_channels=channels, desired_samples=samples))
    check(lambda tf: tuple(tf.audio.decode_wav(tf.constant(WAV), channels, samples)))


def test_wav_errors():
    for body in (
        lambda tf: tf.audio.decode_wav(b"RIFFxx"),
        lambda tf: tf.audio.decode_wav(b"RIFF\0\0\0\0WAVX"),
        lambda tf: tf.audio.encode_wav(np.zeros([3], np.float32), 100),
        lambda tf: tf.audio.encode_wav(np.zeros([3, 1], np.float32), [100, 200]),
    ):
        check_raises(body)
