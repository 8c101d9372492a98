"""numpy caches that store keys and values the way inference code does: bf16, fp8 e4m3, q8_0, q4_1, KIVI."""
