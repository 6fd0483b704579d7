"""Results: ratings (Bradley-Terry and Elo), think-time histograms, leaderboards in
every format, and stored matches shown to people."""
