"""The MindRecord format, layer by layer: schema, header, rows, index, reader, writer.

Nothing here knows about the public ``FileWriter``/``FileReader``/``MindPage`` classes or about
datasets; those build on ``ShardSetReader``, ``ColumnDecoder`` and ``ShardSetWriter``.
"""
