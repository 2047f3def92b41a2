mod helpers;
mod lifecycle;
mod pdeathsig;
