"""Vision-language models on tvr's benchmarks: client, resumable runner, prompts, task registry.

An OpenAI-compatible client, a resumable runner, prompt templates, and the registry where each
benchmark registers its task adapter (`tvr.vlm.tasks.register_task`).
"""
