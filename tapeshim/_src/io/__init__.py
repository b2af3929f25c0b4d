"""Files, records, protocol buffers and file datasets: `tf.io`, `tf.train.Example`, `tf.data` readers."""
