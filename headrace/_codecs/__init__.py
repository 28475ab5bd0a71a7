"""Record codecs shared by the sources and the converters: TFRecord framing, tf.train.Example, CRC-32C."""
