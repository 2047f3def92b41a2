mod capture;
mod helpers;
mod lifecycle;
mod pdeathsig;
