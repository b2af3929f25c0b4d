"""`tf.signal` against real TensorFlow: FFTs, framing, windows, STFT, mel filters, DCT, MFCCs.

FFT inputs are passed as tensors: TF's FFT wrappers convert a numpy argument to the dtype of
an earlier call's input (a numpy complex128 array can come back complex64), which tapeshim
does not imitate.
"""

import numpy as np
import pytest

from oracle import check, check_raises

RNG = np.random.default_rng(7)
SIG = RNG.normal(size=(2, 3, 40)).astype(np.float32)
CPLX = (RNG.normal(size=(2, 6, 5)) + 1j * RNG.normal(size=(2, 6, 5))).astype(np.complex64)
CUBE = (RNG.normal(size=(2, 4, 3, 6)) + 1j * RNG.normal(size=(2, 4, 3, 6))).astype(np.complex128)


@pytest.mark.parametrize("name", ["fft", "ifft", "fft2d", "ifft2d", "fft3d", "ifft3d"])
def test_complex_ffts(name):
    check(lambda tf: getattr(tf.signal, name)(tf.constant(CPLX)))
    check(lambda tf: getattr(tf.signal, name)(tf.constant(CUBE)))
    check_raises(lambda tf: getattr(tf.signal, name)(tf.constant(SIG)))


def test_real_ffts():
    x2 = SIG[:, :, :12]
    for body in (
        lambda tf: tf.signal.rfft(tf.constant(SIG)),
        lambda tf: tf.signal.rfft(tf.constant(SIG), [16]),
        lambda tf: tf.signal.rfft(tf.constant(SIG), [64]),
        lambda tf: tf.signal.rfft2d(tf.constant(x2)),
        lambda tf: tf.signal.rfft2d(tf.constant(x2), [2, 7]),
        lambda tf: tf.signal.rfft3d(tf.constant(x2.astype(np.float64))),
        lambda tf: tf.signal.irfft(tf.constant(CPLX)),
        lambda tf: tf.signal.irfft(tf.constant(CPLX), [7]),
        lambda tf: tf.signal.irfft(tf.constant(CPLX), [12]),
        lambda tf: tf.signal.irfft2d(tf.constant(CPLX)),
        lambda tf: tf.signal.irfft2d(tf.constant(CPLX), [4, 6]),
        lambda tf: tf.signal.irfft3d(tf.constant(CUBE)),
        lambda tf: tf.signal.irfft(tf.signal.rfft(tf.constant(SIG))),
        lambda tf: tf.signal.fftshift(SIG),
        lambda tf: tf.signal.ifftshift(SIG, axes=-1),
        lambda tf: tf.signal.fftshift(CPLX, axes=[1, 2]),
    ):
        check(body)
    check_raises(lambda tf: tf.signal.rfft(tf.constant([1, 2])))
    check_raises(lambda tf: tf.signal.irfft(tf.constant(SIG)))


def test_fft_gradients():
    def grad(tf):
        x = tf.constant(SIG[..., :32])
        with tf.GradientTape() as tape:
            tape.watch(x)
            spectrum = tf.signal.rfft(x)
            y = tf.reduce_sum(tf.abs(spectrum) ** 2) + tf.reduce_sum(tf.signal.irfft(spectrum * 1j) ** 2)
        return tape.gradient(y, x)

    def complex_grad(tf):
        z = tf.constant(CPLX)
        with tf.GradientTape() as tape:
            tape.watch(z)
            y = tf.reduce_sum(tf.math.real(tf.signal.fft2d(z) * tf.signal.ifft(z)))
        return tape.gradient(y, z)

    check(grad)
    check(complex_grad)


def test_frame_and_overlap_and_add():
    for body in (
        lambda tf: tf.signal.frame(SIG, 8, 3),
        lambda tf: tf.signal.frame(SIG, 8, 3, pad_end=True),
        lambda tf: tf.signal.frame(SIG, 7, 5, pad_end=True, pad_value=2.0),
        lambda tf: tf.signal.frame(SIG, 2, 1, axis=1),
        lambda tf: tf.signal.frame(SIG, 50, 5),
        lambda tf: tf.signal.frame(np.arange(10), 4, 4, pad_end=True),
        lambda tf: tf.signal.overlap_and_add(SIG, 10),
        lambda tf: tf.signal.overlap_and_add(SIG[0], 40),
        lambda tf: tf.signal.overlap_and_add(tf.signal.frame(SIG, 8, 4), 4),
    ):
        check(body)
    check_raises(lambda tf: tf.signal.overlap_and_add(SIG[0, 0], 2))
    check_raises(lambda tf: tf.signal.frame(np.float32(1), 2, 1))


def test_windows():
    for length in (1, 2, 7, 8, 64):
        for periodic in (True, False):
            check(lambda tf, n=length, p=periodic: tf.signal.hann_window(n, periodic=p))
            check(lambda tf, n=length, p=periodic: tf.signal.hamming_window(n, periodic=p, dtype=tf.float64))
    check_raises(lambda tf: tf.signal.hann_window(4, dtype=tf.int32))
    for length in (1, 4, 7, 16):
        check(lambda tf, n=length: tf.signal.kaiser_window(n))
        check(lambda tf, n=length: tf.signal.kaiser_window(n, beta=3.0, dtype=tf.float64))
        check(lambda tf, n=length: tf.signal.vorbis_window(n))
        check(lambda tf, n=length: tf.signal.kaiser_bessel_derived_window(n))


def test_stft_and_inverse():
    audio = RNG.normal(size=(2, 300)).astype(np.float32)
    for body in (
        lambda tf: tf.signal.stft(audio, 64, 16),
        lambda tf: tf.signal.stft(audio, 50, 20, pad_end=True),
        lambda tf: tf.signal.stft(audio, 64, 32, fft_length=128, window_fn=tf.signal.hamming_window),
        lambda tf: tf.signal.stft(tf.constant(audio.astype(np.float64)), 40, 10, window_fn=None),
    ):
        check(body)
    spec = RNG.normal(size=(2, 9, 33)).astype(np.float32) + 0j
    spec = spec.astype(np.complex64)
    for body in (
        lambda tf: tf.signal.inverse_stft(tf.constant(spec), 64, 16),
        lambda tf: tf.signal.inverse_stft(tf.constant(spec), 50, 16, fft_length=64),
        lambda tf: tf.signal.inverse_stft(tf.constant(spec), 80, 16, fft_length=64),
        lambda tf: tf.signal.inverse_stft(
            tf.signal.stft(audio, 64, 16), 64, 16, window_fn=tf.signal.inverse_stft_window_fn(16)
        ),
    ):
        check(body)

    def grad(tf):
        x = tf.constant(audio)
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = tf.reduce_sum(tf.abs(tf.signal.stft(x, 64, 16)))
        return tape.gradient(y, x)

    check(grad)


def test_mel_dct_mfccs():
    check(lambda tf: tf.signal.linear_to_mel_weight_matrix())
    check(lambda tf: tf.signal.linear_to_mel_weight_matrix(40, 257, 16000, 20.0, 7600.0))
    check(lambda tf: tf.signal.linear_to_mel_weight_matrix(8, 33, 8000.0, 0.0, 4000.0, dtype=tf.float64))
    for body in (
        lambda tf: tf.signal.linear_to_mel_weight_matrix(0),
        lambda tf: tf.signal.linear_to_mel_weight_matrix(lower_edge_hertz=-1.0),
        lambda tf: tf.signal.linear_to_mel_weight_matrix(lower_edge_hertz=500.0, upper_edge_hertz=100.0),
        lambda tf: tf.signal.linear_to_mel_weight_matrix(upper_edge_hertz=9000.0),
    ):
        check_raises(body)
    x = RNG.normal(size=(3, 12)).astype(np.float32)
    for kind in (1, 2, 3, 4):
        check(lambda tf, k=kind: tf.signal.dct(x, type=k))
        check(lambda tf, k=kind: tf.signal.idct(x.astype(np.float64), type=k))
        if kind != 1:
            check(lambda tf, k=kind: tf.signal.dct(x, type=k, norm="ortho"))
            check(lambda tf, k=kind: tf.signal.idct(tf.signal.dct(x, type=k, norm="ortho"), type=k, norm="ortho"))
    check(lambda tf: tf.signal.dct(x, n=8))
    check(lambda tf: tf.signal.dct(x, n=16))
    for body in (
        lambda tf: tf.signal.dct(x, type=5),
        lambda tf: tf.signal.dct(x, type=1, norm="ortho"),
        lambda tf: tf.signal.dct(x, axis=0),
        lambda tf: tf.signal.dct(x, norm="foo"),
    ):
        check_raises(body)
    logmel = RNG.normal(size=(2, 5, 40)).astype(np.float32)
    audio = RNG.normal(size=(1, 256)).astype(np.float32)
    check(lambda tf: tf.signal.mfccs_from_log_mel_spectrograms(logmel)[..., :13])

    def pipeline(tf):
        @tf.function
        def mfcc(audio):
            spectrogram = tf.abs(tf.signal.stft(audio, 64, 32))
            mel = tf.tensordot(spectrogram, tf.signal.linear_to_mel_weight_matrix(16, 33, 8000, 80.0, 3800.0), 1)
            return tf.signal.mfccs_from_log_mel_spectrograms(tf.math.log(mel + 1e-6))

        return mfcc(tf.constant(audio))

    check(pipeline)
