"""What every part of tvr uses: errors, JSON lines and atomic writes, hashes, the job engine, statistics."""
