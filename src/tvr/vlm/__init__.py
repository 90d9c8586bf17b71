"""Vision-language models on tvr's benchmarks: an OpenAI-compatible client, a resumable runner,
prompt templates and one task adapter per benchmark (VisualTrans, TRANCE)."""
