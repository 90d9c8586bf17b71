"""`tvr generate`: TRANCE image datasets made on the job engine (config, shard job, a release with
images read into a store). It samples and renders, so it stands above data/, sampling/ and
render/."""
