"""What every part of tvr uses: errors, atomic files, the job engine, plugins, statistics, PNG."""
