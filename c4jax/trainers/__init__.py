"""Training algorithms: pure, jitted building blocks; experiments/ scripts drive them."""
