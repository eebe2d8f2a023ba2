-- Forget the stored split (`tracemill split --reset`).
DELETE FROM splits;
